"""The AWS DMS landing contract (SPEC §3): `dms/<schema>/<table>/*.parquet`.

Full-load files are `LOAD<8 digits>.parquet` and have no `Op` column; CDC files
(any other `*.parquet`, DMS names them `<yyyymmdd-hhmmssfff>.parquet`) have `Op`
(I/U/D) first. Both carry DMS's `last_update_time`. Files of one table may differ
in columns (the source table evolved): they are read per schema and unioned by
name, so a column missing from older files reads NULL there.

Each row keeps where it came from, which the CDC merge needs for a deterministic
order among changes with equal `last_update_time`: `_source_file` (relative to the
landing root; also the ingestion ledger), `_row_in_file` (0-based position in its
file), `_load_kind` (full/cdc), `_load_date` and `_ingested_at` (one value per raw
batch; the marts' watermark).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from floe.landing.loads import LandingError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

OP_COLUMN = "Op"
TIMESTAMP_COLUMN = "last_update_time"
OPS = ("I", "U", "D")
LOAD_FILE = re.compile(r"^LOAD\d{8}\.parquet$")
CDC_FILE = re.compile(r"^(\d{8})-\d{6,9}\.parquet$")


@dataclass(frozen=True)
class DmsFile:
    path: Path
    relative: str  # ledger key, relative to the landing root
    kind: str  # full | cdc
    load_date: date | None  # CDC: from the file name; full load: from its rows


def discover_dms_files(landing: Path, schema: str, table: str) -> list[DmsFile]:
    """The table's landed files: full-load files first, then CDC files in name (time) order."""
    folder = landing / "dms" / schema / table
    if not folder.is_dir():
        return []
    loads, changes = [], []
    for path in sorted(folder.glob("*.parquet")):
        relative = path.relative_to(landing).as_posix()
        if LOAD_FILE.match(path.name):
            loads.append(DmsFile(path, relative, "full", None))
        elif match := CDC_FILE.match(path.name):
            try:
                day = date(int(match[1][:4]), int(match[1][4:6]), int(match[1][6:]))
            except ValueError as exc:
                raise LandingError(f"{path}: {match[1]} is not a date (yyyymmdd)") from exc
            changes.append(DmsFile(path, relative, "cdc", day))
        else:
            raise LandingError(
                f"{path}: not a DMS file name (want LOADnnnnnnnn.parquet for a full load "
                "or yyyymmdd-hhmmssfff.parquet for CDC); move it out of the landing folder"
            )
    return loads + changes


def read_dms_files(spark: SparkSession, files: list[DmsFile]) -> DataFrame:
    """Rows of `files` with provenance columns; a contract violation names the file."""
    import pyarrow.parquet as pq
    from pyspark.sql import functions as F

    groups: dict[tuple, list[DmsFile]] = defaultdict(list)
    for f in files:
        try:
            arrow_schema = pq.read_schema(f.path)
        except Exception as exc:  # pyarrow raises several types for a broken file
            raise LandingError(f"{f.path}: not a readable Parquet file ({exc})") from exc
        names = arrow_schema.names
        if f.kind == "cdc" and (not names or names[0] != OP_COLUMN):
            raise LandingError(f"{f.path}: a DMS CDC file has {OP_COLUMN} as first column")
        if f.kind == "full" and OP_COLUMN in names:
            raise LandingError(f"{f.path}: a full-load file has no {OP_COLUMN} column")
        if TIMESTAMP_COLUMN not in names:
            raise LandingError(f"{f.path}: no {TIMESTAMP_COLUMN} column (DMS TimestampColumnName)")
        groups[tuple(str(t) for t in arrow_schema.types) + tuple(names)].append(f)

    frames = []
    for group in groups.values():
        prefix = group[0].relative.rsplit("/", 1)[0] + "/"
        df = spark.read.parquet(*[str(f.path) for f in group])
        if OP_COLUMN not in df.columns:
            df = df.select(F.lit(None).cast("string").alias(OP_COLUMN), "*")
        df = df.withColumn("_source_file", F.concat(F.lit(prefix), F.col("_metadata.file_name")))
        df = df.withColumn("_row_in_file", F.col("_metadata.row_index"))
        frames.append(df)
    if not frames:
        return _empty(spark)
    df = frames[0]
    for other in frames[1:]:
        df = df.unionByName(other, allowMissingColumns=True)
    kinds = F.create_map(*[F.lit(x) for f in files for x in (f.relative, f.kind)])
    dates = F.create_map(
        *[F.lit(x) for f in files if f.load_date for x in (f.relative, f.load_date.isoformat())]
    )
    df = df.withColumn("_load_kind", kinds[F.col("_source_file")])
    # CDC files are dated by name; a full load by the capture time of its rows.
    named = F.to_date(dates[F.col("_source_file")]) if any(f.load_date for f in files) else None
    captured = F.to_date(F.col(TIMESTAMP_COLUMN))
    df = df.withColumn("_load_date", captured if named is None else F.coalesce(named, captured))
    _validate(df)
    return df.withColumn("_ingested_at", F.current_timestamp())


def _validate(df: DataFrame) -> None:
    from pyspark.sql import functions as F

    bad = (F.col("_load_kind") == "cdc") & (
        F.col(OP_COLUMN).isNull() | ~F.col(OP_COLUMN).isin(*OPS)
    ) | F.col(TIMESTAMP_COLUMN).isNull()
    problems = (
        df.where(bad)
        .groupBy("_source_file")
        .agg(F.count("*").alias("n"), F.first(OP_COLUMN).alias("example"))
        .collect()
    )
    if problems:
        lines = [
            f"- {r['_source_file']}: {r['n']} row(s) with {OP_COLUMN} not in "
            f"{'/'.join(OPS)} or no {TIMESTAMP_COLUMN} (e.g. {OP_COLUMN}={r['example']!r})"
            for r in problems
        ]
        raise LandingError("malformed DMS files (fix or remove them):\n" + "\n".join(lines))


def _empty(spark: SparkSession) -> DataFrame:
    from pyspark.sql.types import (
        DateType,
        LongType,
        StringType,
        StructField,
        StructType,
        TimestampType,
    )

    return spark.createDataFrame(
        [],
        StructType(
            [
                StructField(OP_COLUMN, StringType()),
                StructField(TIMESTAMP_COLUMN, TimestampType()),
                StructField("_source_file", StringType()),
                StructField("_row_in_file", LongType()),
                StructField("_load_kind", StringType()),
                StructField("_load_date", DateType()),
                StructField("_ingested_at", TimestampType()),
            ]
        ),
    )


def read_new_dms_files(
    spark: SparkSession, landing: Path, schema: str, table: str, already_loaded: set[str]
) -> DataFrame:
    """Rows of the `dms/<schema>/<table>` files not yet in `already_loaded` (ledger keys)."""
    files = [
        f for f in discover_dms_files(landing, schema, table) if f.relative not in already_loaded
    ]
    return read_dms_files(spark, files)
