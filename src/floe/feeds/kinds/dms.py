"""Feed kind ``dms``: an AWS DMS target folder of Parquet files (docs/feeds.md).

Layout: ``<landing>/<feed landing>/`` holds full-load files ``LOAD<8 digits>.parquet``
(no op column) and CDC files ``<yyyymmdd-hhmmssfff>.parquet`` with the op column
(``Op``: I/U/D) first. Both carry DMS's timestamp column (``last_update_time``). Files
of one table may differ in columns (the source table evolved): they are read per
schema and unioned by name, so a column missing from older files reads NULL there.

Raw rows keep every landed column plus where they came from, which the CDC merge
needs for a deterministic order among changes with equal timestamps:
``_source_file`` (the ledger key), ``_row_in_file`` (0-based position in its file),
``_load_kind`` (full/cdc), ``_load_date`` (CDC: the file name's date; full load: the
capture date of the row) and ``_ingested_at`` (one value per raw batch).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from floe.feeds.declarations import Feed, FeedError
from floe.feeds.files import (
    LandedFile,
    check_counts,
    landed_file,
    list_files,
    spark_path,
    with_file_columns,
)
from floe.feeds.kinds.base import Batch, IngestContext, spark_schema
from floe.feeds.ledger import FileCounts
from floe.runtime.jars import batch_timestamp

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


OPTIONS = frozenset({"timestamp_column"})
DEFAULT_OP_COLUMN = "Op"
DEFAULT_TIMESTAMP_COLUMN = "last_update_time"
OPS = ("I", "U", "D")
LOAD_FILE = re.compile(r"^LOAD\d{8}\.parquet$")
CDC_FILE = re.compile(r"^(\d{8})-\d{6,9}\.parquet$")
FILE_ATTRS = (("_load_kind", "string"), ("_file_load_date", "date"))


def op_column(feed: Feed) -> str:
    return str(feed.option("op_column", DEFAULT_OP_COLUMN))


def timestamp_column(feed: Feed) -> str:
    return str(feed.option("timestamp_column", DEFAULT_TIMESTAMP_COLUMN))


def validate(feed: Feed) -> None:
    if not feed.key:
        raise FeedError(f"feed {feed.id} (dms): declare its primary key (meta.floe.key)")


def discover(feed: Feed, landing: Path) -> list[LandedFile]:
    """Full-load files first, then CDC files in name (capture time) order."""
    loads, changes = [], []
    for path in list_files(landing / feed.landing, "*.parquet", root=landing):
        if LOAD_FILE.match(path.name):
            loads.append(landed_file(landing, path, _load_kind="full", _file_load_date=None))
        elif match := CDC_FILE.match(path.name):
            try:
                day = date(int(match[1][:4]), int(match[1][4:6]), int(match[1][6:]))
            except ValueError as exc:
                raise FeedError(f"{path}: {match[1]} is not a date (yyyymmdd)") from exc
            changes.append(landed_file(landing, path, _load_kind="cdc", _file_load_date=day))
        else:
            raise FeedError(
                f"{path}: not a DMS file name (want LOADnnnnnnnn.parquet for a full load "
                "or yyyymmdd-hhmmssfff.parquet for CDC); move it out of the landing folder"
            )
    return loads + changes


def _output_tail() -> list[tuple[str, str]]:
    return [
        ("_source_file", "string"),
        ("_row_in_file", "bigint"),
        ("_load_kind", "string"),
        ("_load_date", "date"),
        ("_ingested_at", "timestamp"),
    ]


def empty(spark: SparkSession, feed: Feed, ctx: IngestContext) -> DataFrame:
    head = [(op_column(feed), "string"), *feed.column_types()]
    return spark.createDataFrame([], spark_schema([*head, *_output_tail()]))


def read(spark: SparkSession, feed: Feed, files: Sequence[LandedFile], ctx: IngestContext) -> Batch:
    """Rows of ``files`` with provenance columns; a contract violation names the file."""
    import pyarrow.parquet as pq
    from pyspark.sql import functions as F

    op, ts = op_column(feed), timestamp_column(feed)
    groups: dict[tuple, list[LandedFile]] = defaultdict(list)
    for f in files:
        try:
            arrow_schema = pq.read_schema(f.path)
        except Exception as exc:  # pyarrow raises several types for a broken file
            raise FeedError(f"{f.path}: not a readable Parquet file ({exc})") from exc
        names = arrow_schema.names
        if f.attr("_load_kind") == "cdc" and (not names or names[0] != op):
            raise FeedError(f"{f.path}: a DMS CDC file has {op} as first column")
        if f.attr("_load_kind") == "full" and op in names:
            raise FeedError(f"{f.path}: a full-load file has no {op} column")
        if ts not in names:
            raise FeedError(f"{f.path}: no {ts} column (DMS TimestampColumnName)")
        groups[tuple(str(t) for t in arrow_schema.types) + tuple(names)].append(f)

    frames = []
    for group in groups.values():
        df = spark.read.parquet(*[spark_path(f.path) for f in group])
        if op not in df.columns:
            df = df.select(F.lit(None).cast("string").alias(op), "*")
        df = df.withColumn("_row_in_file", F.col("_metadata.row_index"))
        frames.append(with_file_columns(df, spark, group, FILE_ATTRS))
    df = frames[0]
    for other in frames[1:]:
        df = df.unionByName(other, allowMissingColumns=True)
    # CDC files are dated by name; a full load by the capture time of its rows.
    df = df.withColumn("_load_date", F.coalesce("_file_load_date", F.to_date(F.col(ts)))).drop(
        "_file_load_date"
    )
    counts = _validate(df, op, ts)
    rows = df.withColumn("_ingested_at", batch_timestamp(df.sparkSession, ctx.ingested_at))
    return Batch(rows=rows, counts=counts)


def _validate(df: DataFrame, op: str, ts: str) -> dict[str, FileCounts]:
    from pyspark.sql import functions as F

    bad = (F.col("_load_kind") == "cdc") & (F.col(op).isNull() | ~F.col(op).isin(*OPS)) | F.col(
        ts
    ).isNull()
    stats = (
        df.groupBy("_source_file")
        .agg(
            F.count(F.lit(1)).alias("rows"),
            F.sum(F.when(bad, 1).otherwise(0)).alias("bad"),
            F.first(F.when(bad, F.col(op)), ignorenulls=True).alias("example"),
        )
        .collect()
    )
    problems = sorted((r for r in stats if r["bad"]), key=lambda r: r["_source_file"])
    if problems:
        lines = [
            f"- {r['_source_file']}: {r['bad']} row(s) with {op} not in "
            f"{'/'.join(OPS)} or no {ts} (e.g. {op}={r['example']!r})"
            for r in problems
        ]
        raise FeedError("malformed DMS files (fix or remove them):\n" + "\n".join(lines))
    counts = {r["_source_file"]: FileCounts(r["rows"], r["rows"]) for r in stats}
    check_counts(counts, "dms read")
    return counts


PROVENANCE = {
    "_source_file": "Landed file the row came from, relative to the landing root (the ledger key).",
    "_row_in_file": "0-based position of the row in its file (the final tie-breaker of changes).",
    "_load_kind": "full (LOAD*.parquet) or cdc.",
    "_load_date": "Load date: the CDC file name's date, or the capture date for a full load.",
    "_ingested_at": "When floe ingested the row; one value per ingest batch.",
    "_load_seq": "Load sequence of the ingest batch: increases in commit order across the warehouse (the marts' watermark, docs/reliability.md).",
}


def provenance_docs(feed: Feed) -> dict[str, str]:
    """Descriptions of the columns this kind adds to the raw table."""
    return {
        op_column(feed): f"DMS op on CDC rows ({'/'.join(OPS)}); NULL on full-load rows.",
        timestamp_column(feed): "DMS capture time of the change (TimestampColumnName).",
        **PROVENANCE,
    }
