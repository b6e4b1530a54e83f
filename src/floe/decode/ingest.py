"""Exactly-once ingestion of landed stream files into raw.<stream> + raw.quarantine.

One decode pass per batch of new files feeds three tables:

* ``raw.<stream>`` — the typed records (returned to dbt, which appends them; or
  appended by ``floe stream``);
* ``raw.quarantine`` — every line that did not decode, with its code;
* ``raw.stream_files`` — the per-file manifest: records in / decoded / quarantined.

The ledger of a stream (files never to read again) is *the files in raw.<stream>*
plus *the manifest's files with nothing decoded* (all-bad files leave no raw row).
Quarantine and manifest rows are written before raw.<stream> is committed, and both
are replaced per (stream, file) rather than appended blindly, so a crash between the
writes is repaired by the next run: files missing from raw.<stream> are decoded again
and their quarantine / manifest rows replaced — no duplicates, no gaps.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from floe.decode.core import decode_lines, read_lines
from floe.decode.specs import STREAMS, StreamSpec, registry_path, sync_local_registry

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

QUARANTINE = "raw.quarantine"
MANIFEST = "raw.stream_files"
RAW_META = (
    "_source_file",
    "_sequence_number",
    "_partition_key",
    "_arrival_ts",
    "_schema_version",
    "ingest_year",
    "ingest_month",
    "ingest_day",
    "ingest_hour",
)

QUARANTINE_DDL = f"""
create table if not exists {QUARANTINE} (
    stream string,
    _source_file string,
    _sequence_number string,
    _partition_key string,
    _arrival_ts timestamp,
    raw_data string,
    raw_bytes binary,
    error_code string,
    error_detail string,
    _ingested_at timestamp
) using iceberg partitioned by (stream)
"""

MANIFEST_DDL = f"""
create table if not exists {MANIFEST} (
    stream string,
    _source_file string,
    records_in bigint,
    decoded bigint,
    quarantined bigint,
    _ingested_at timestamp
) using iceberg
"""


def batch_time() -> str:
    """One UTC ingest time per batch (text: Spark casts it in the session's UTC zone)."""
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")


def landed_files(landing: Path, stream: str) -> dict[str, Path]:
    """relative path -> absolute path of every landed JSONL file of ``stream``, sorted."""
    root = landing / "streams" / stream
    files = sorted(
        p for p in root.glob("ingest_year=*/ingest_month=*/ingest_day=*/ingest_hour=*/*.jsonl")
    )
    return {p.relative_to(landing).as_posix(): p for p in files if not p.name.startswith(".")}


def ensure_side_tables(spark: SparkSession) -> None:
    spark.sql(QUARANTINE_DDL)
    spark.sql(MANIFEST_DDL)


def _table_exists(spark: SparkSession, table: str) -> bool:
    return bool(spark.catalog.tableExists(table))


def ingested_files(
    spark: SparkSession, spec: StreamSpec, raw_exists: bool | None = None
) -> set[str]:
    """The ledger: files of ``spec`` that are done (see the module docstring)."""
    ensure_side_tables(spark)
    done = {
        row[0]
        for row in spark.sql(
            f"select _source_file from {MANIFEST} where stream = '{spec.name}' and decoded = 0"
        ).collect()
    }
    if raw_exists is None:
        raw_exists = _table_exists(spark, spec.table)
    if raw_exists:
        done |= {
            row[0] for row in spark.sql(f"select distinct _source_file from {spec.table}").collect()
        }
    return done


def split(decoded: DataFrame, spec: StreamSpec, ingested_at: str):
    """(raw rows, quarantine rows) of a decoded DataFrame, stamped with one batch time."""
    from pyspark.sql import functions as F

    stamp = F.lit(ingested_at).cast("timestamp").alias("_ingested_at")
    good = decoded.where(F.col("error_code").isNull()).select("record.*", *RAW_META, stamp)
    bad = decoded.where(F.col("error_code").isNotNull()).select(
        F.lit(spec.name).alias("stream"),
        "_source_file",
        "_sequence_number",
        "_partition_key",
        "_arrival_ts",
        "raw_data",
        "raw_bytes",
        "error_code",
        "error_detail",
        stamp,
    )
    return good, bad


def _in_list(files: list[str]) -> str:
    return ", ".join("'" + f.replace("'", "''") + "'" for f in files)


def file_counts(decoded: DataFrame, files: list[str]) -> list[tuple[str, int, int, int]]:
    """(file, records in, decoded, quarantined) of every file in ``files`` (0s if absent)."""
    from pyspark.sql import functions as F

    counts = (
        decoded.groupBy("_source_file")
        .agg(
            F.count(F.lit(1)).alias("records_in"),
            F.count(F.when(F.col("error_code").isNull(), 1)).alias("decoded"),
            F.count(F.col("error_code")).alias("quarantined"),
        )
        .collect()
    )
    per_file = {row[0]: (row[1], row[2], row[3]) for row in counts}
    return [(f, *per_file.get(f, (0, 0, 0))) for f in files]


def write_side_tables(
    spark: SparkSession,
    spec: StreamSpec,
    bad: DataFrame,
    rows: list[tuple[str, int, int, int]],
    ingested_at: str,
) -> list[tuple[str, int, int, int]]:
    """Replace the quarantine and manifest rows of the files in ``rows`` (per-file counts)."""
    from pyspark.sql import functions as F

    ensure_side_tables(spark)
    in_list = _in_list([r[0] for r in rows])
    where = f"stream = '{spec.name}' and _source_file in ({in_list})"
    # Replays after a crash only: a first pass finds nothing to delete and commits nothing.
    for table in (QUARANTINE, MANIFEST):
        if spark.sql(f"select 1 from {table} where {where} limit 1").collect():
            spark.sql(f"delete from {table} where {where}")
    if any(r[3] for r in rows):
        bad.writeTo(QUARANTINE).append()
    manifest = spark.createDataFrame(
        [(spec.name, f, i, d, q, ingested_at) for f, i, d, q in rows],
        "stream string, _source_file string, records_in bigint, decoded bigint, "
        "quarantined bigint, _ingested_at string",
    ).withColumn("_ingested_at", F.col("_ingested_at").cast("timestamp"))
    manifest.writeTo(MANIFEST).append()
    return rows


def _staging_dir(state_dir: Path, stream: str) -> Path:
    """A fresh folder for one decode pass; earlier passes' folders of the stream removed.

    The previous pass's rows were appended by its caller before this one starts (dbt
    and ``floe stream`` decode a stream's files one pass at a time), so they are free.
    """
    import shutil
    import uuid

    root = state_dir / "decode_staging" / stream
    if root.exists():
        for old in root.iterdir():
            shutil.rmtree(old, ignore_errors=True)
    return root / uuid.uuid4().hex


def empty_raw(spark: SparkSession, spec: StreamSpec) -> DataFrame:
    """The raw table's shape with no rows (what dbt gets when nothing is new)."""
    from floe.decode.core import decode_output_schema

    decoded = spark.createDataFrame([], decode_output_schema(spec))
    from pyspark.sql import functions as F

    decoded = decoded.select(
        "*",
        F.lit(None).cast("timestamp").alias("_arrival_ts"),
        *(F.lit(None).cast("int").alias(f"ingest_{p}") for p in ("year", "month", "day", "hour")),
    )
    return split(decoded, spec, batch_time())[0]


def ingest_lines(
    spark: SparkSession,
    spec: StreamSpec,
    lines: DataFrame,
    files: list[str],
    state_dir: Path,
) -> tuple[DataFrame, list[tuple[str, int, int, int]]]:
    """Decode ``lines`` (``_line, _source_file`` of exactly ``files``) in one pass.

    The pass writes its output (good and bad rows, tagged by ``error_code``) once to a
    Parquet staging folder; the per-file counts, the quarantine rows and the returned
    raw rows are all read from there (column-pruned, no second decode, nothing held in
    the JVM heap — the driver stays flat however many records a pass decodes).
    Writes quarantine + manifest rows for ``files`` and returns (raw rows, counts).
    """
    ingested_at = batch_time()
    staging = _staging_dir(state_dir, spec.name)
    decode_lines(lines, spec, registry_path(state_dir)).write.parquet(str(staging))
    decoded = spark.read.parquet(str(staging))
    good, bad = split(decoded, spec, ingested_at)
    counts = file_counts(decoded, sorted(files))
    write_side_tables(spark, spec, bad, counts, ingested_at)
    return good, counts


def ingest_new(
    spark: SparkSession,
    stream: str,
    landing: Path,
    state_dir: Path,
    raw_exists: bool | None = None,
) -> tuple[DataFrame, list[tuple[str, int, int, int]]]:
    """Decode the stream's landed files not in its ledger (what a dbt build does).

    Writes quarantine + manifest rows and returns (raw rows to append, per-file
    counts). The raw rows are read from the pass's staging folder (dbt may read them
    more than once without decoding again).
    """
    spec = STREAMS[stream]
    sync_local_registry(state_dir)
    done = ingested_files(spark, spec, raw_exists)
    new = {rel: path for rel, path in landed_files(landing, stream).items() if rel not in done}
    if not new:
        return empty_raw(spark, spec), []
    lines = read_lines(spark, [str(p) for p in new.values()])
    return ingest_lines(spark, spec, lines, list(new), state_dir)
