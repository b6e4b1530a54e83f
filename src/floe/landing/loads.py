"""Date-partitioned CSV loads with a `_manifest.json` per load (customers).

Layout: `<root>/<table>/load_date=YYYY-MM-DD/{_manifest.json, *.csv}`, the
manifest declaring `{"kind": "full" | "changes"}`. Each row read keeps where it
came from: `_source_file` (relative to the landing root), `_load_date`,
`_load_kind`. Anything malformed raises LandingError naming the file.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

KINDS = ("full", "changes")
STATUS_COLUMN = "rec_source_status"
STATUSES = ("I", "U", "D")
TIMESTAMP_FORMAT = "yyyy-MM-dd[ ]['T']HH:mm:ss[.SSSSSS][XXX]"


class LandingError(ValueError):
    """A landed file or manifest is malformed; the message names it and says what to fix."""


@dataclass(frozen=True)
class LoadFile:
    path: Path
    relative: str  # path relative to the landing root: the ledger key
    load_date: date
    kind: str


def discover_loads(landing: Path, table_dir: str) -> list[LoadFile]:
    """Every CSV file of every load of `landing/table_dir`, oldest load first."""
    root = landing / table_dir
    files: list[LoadFile] = []
    if not root.is_dir():
        return files
    for folder in sorted(root.glob("load_date=*")):
        if not folder.is_dir():
            continue
        raw_date = folder.name.split("=", 1)[1]
        try:
            load_date = date.fromisoformat(raw_date)
        except ValueError as exc:
            raise LandingError(
                f"{folder}: '{raw_date}' is not a date (want load_date=YYYY-MM-DD)"
            ) from exc
        kind = _read_manifest(folder)
        csvs = sorted(p for p in folder.glob("*.csv") if not p.name.startswith("."))
        if kind == "full" and not csvs:
            raise LandingError(
                f"{folder}: the manifest declares a full load but no *.csv file is there; "
                "a full load with no rows would delete every customer"
            )
        files.extend(LoadFile(p, p.relative_to(landing).as_posix(), load_date, kind) for p in csvs)
    return files


def _read_manifest(folder: Path) -> str:
    manifest = folder / "_manifest.json"
    if not manifest.is_file():
        raise LandingError(
            f"{manifest}: missing. Every load declares its kind beside its files: "
            '{"kind": "full"} or {"kind": "changes"}'
        )
    try:
        kind = json.loads(manifest.read_text()).get("kind")
    except (json.JSONDecodeError, AttributeError) as exc:
        raise LandingError(f"{manifest}: not a JSON object ({exc})") from exc
    if kind not in KINDS:
        raise LandingError(f"{manifest}: kind must be one of {', '.join(KINDS)}, got {kind!r}")
    return kind


def _header(path: Path) -> list[str]:
    with path.open("r", encoding="utf-8", newline="") as handle:
        first = handle.readline()
    return [c.strip() for c in first.rstrip("\r\n").split(",")] if first else []


def read_loads(
    spark: SparkSession,
    files: Sequence[LoadFile],
    schema: StructType,
    optional: Iterable[str] = (STATUS_COLUMN,),
) -> DataFrame:
    """Read `files` typed by `schema` (+ optional columns), with provenance columns.

    Headers are checked per file; rows that do not parse, and change loads whose
    status is not I/U/D, fail the read with the files named.
    """
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType, StructField, StructType

    optional = tuple(optional)
    required = [f.name for f in schema.fields]
    groups: dict[tuple[str, ...], list[LoadFile]] = defaultdict(list)
    for lf in files:
        header = _header(lf.path)
        extra = [c for c in header if c not in required]
        if header[: len(required)] != required or any(c not in optional for c in extra):
            raise LandingError(
                f"{lf.path}: header {','.join(header) or '(empty file)'} does not match the "
                f"contract {','.join(required)}[,{','.join(optional)}]"
            )
        if lf.kind == "changes" and STATUS_COLUMN not in header:
            raise LandingError(f"{lf.path}: a change load needs a {STATUS_COLUMN} column")
        groups[tuple(header)].append(lf)

    kinds = {lf.relative: lf.kind for lf in files}
    frames = []
    for header, group in groups.items():
        fields = list(schema.fields) + [
            StructField(c, StringType()) for c in header[len(required) :]
        ]
        read_schema = StructType([*fields, StructField("_corrupt_record", StringType())])
        prefix = group[0].relative.rsplit("/", 2)[0] + "/"
        df = (
            spark.read.schema(read_schema)
            .option("header", True)
            .option("mode", "PERMISSIVE")
            .option("columnNameOfCorruptRecord", "_corrupt_record")
            .option("timestampFormat", TIMESTAMP_FORMAT)
            .csv([str(lf.path) for lf in group])
            .withColumn(
                "_source_file",
                F.concat(F.lit(prefix), F.substring_index(F.col("_metadata.file_path"), "/", -2)),
            )
        )
        for column in optional:
            if column not in header:
                df = df.withColumn(column, F.lit(None).cast("string"))
        frames.append(df)
    if not frames:
        empty = StructType(
            [
                *schema.fields,
                *(StructField(c, StringType()) for c in optional),
                StructField("_corrupt_record", StringType()),
                StructField("_source_file", StringType()),
            ]
        )
        frames.append(spark.createDataFrame([], empty))
    df = frames[0]
    for other in frames[1:]:
        df = df.unionByName(other)
    kind_map = (
        F.create_map(*[F.lit(x) for kv in sorted(kinds.items()) for x in kv]) if kinds else None
    )
    df = df.withColumn(
        "_load_kind", kind_map[F.col("_source_file")] if kind_map is not None else F.lit(None)
    ).withColumn(
        "_load_date",
        F.to_date(F.regexp_extract("_source_file", r"load_date=(\d{4}-\d{2}-\d{2})", 1)),
    )
    _validate(df, files)
    return df.drop("_corrupt_record").withColumn("_ingested_at", F.current_timestamp())


def _validate(df: DataFrame, files: Sequence[LoadFile]) -> None:
    """One aggregation over the new files: unparsable rows and bad change flags per file."""
    from pyspark.sql import functions as F

    if not files:
        return
    bad_status = (F.col("_load_kind") == "changes") & (
        F.col(STATUS_COLUMN).isNull() | ~F.col(STATUS_COLUMN).isin(*STATUSES)
    )
    # Spark parses only the columns a query reads: read them all, or a bad value
    # in an unread column would go unnoticed.
    data_columns = [c for c in df.columns if not c.startswith("_")]
    problems = (
        df.groupBy("_source_file")
        .agg(
            F.sum(F.xxhash64(*data_columns)).alias("_checksum"),
            F.count(F.col("_corrupt_record")).alias("unparsable"),
            F.sum(F.when(bad_status, 1).otherwise(0)).alias("bad_status"),
            F.first(F.col("_corrupt_record"), ignorenulls=True).alias("example"),
        )
        .where("unparsable > 0 or bad_status > 0")
        .collect()
    )
    if problems:
        lines = [
            f"- {row['_source_file']}: {row['unparsable']} unparsable row(s)"
            f"{' e.g. ' + repr(row['example']) if row['example'] else ''}, "
            f"{row['bad_status']} row(s) with {STATUS_COLUMN} not in {'/'.join(STATUSES)}"
            for row in problems
        ]
        raise LandingError("malformed landed files (fix or remove them):\n" + "\n".join(lines))


def already_loaded(spark: SparkSession, dbt: object) -> set[str]:
    """Ledger of an incremental raw model: the landed files its table already holds."""
    if not getattr(dbt, "is_incremental", False):
        return set()
    rows = spark.sql(f"select distinct _source_file from {dbt.this}").collect()  # type: ignore[attr-defined]
    return {row[0] for row in rows}
