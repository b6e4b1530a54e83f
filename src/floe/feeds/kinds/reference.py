"""Feed kind ``reference``: full extracts of a reference table, one CSV per change.

Layout (docs/feeds.md; the seed's product priority table): ``<landing>/<feed
landing>/*.csv`` with a header row of the declared columns, and a change flag
(``_CHANGED`` by default) that the upstream writes whenever it lands a new extract.
``floe stream`` refreshes the reference only when the flag is newer than its last
refresh; ``dbt build`` reads every new file regardless.

A file's load date is the ISO date in its name (``product_priority_2022-07-02.csv``),
else the date of its rows' ``load_date_column``. Raw rows keep the declared columns,
``_source_file``, ``_load_date`` and ``_ingested_at``.
"""

from __future__ import annotations

import re
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
from floe.feeds.kinds.base import Batch, IngestContext, require_columns, spark_schema
from floe.feeds.ledger import FileCounts
from floe.runtime.jars import batch_timestamp

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


OPTIONS = frozenset({"change_flag", "load_date_column"})
DEFAULT_FLAG = "_CHANGED"
DATE_IN_NAME = re.compile(r"(\d{4}-\d{2}-\d{2})\.csv$")
FILE_ATTRS = (("_file_load_date", "date"),)


def change_flag(feed: Feed, landing: Path) -> Path:
    """The flag file: present (and newer than the last refresh) means the reference changed."""
    return landing / feed.landing / str(feed.option("change_flag", DEFAULT_FLAG))


def validate(feed: Feed) -> None:
    names = [name for name, _ in require_columns(feed)]
    column = feed.option("load_date_column")
    if column is not None and column not in names:
        raise FeedError(f"feed {feed.id}: load_date_column {column!r} is not a declared column")


def discover(feed: Feed, landing: Path) -> list[LandedFile]:
    files = []
    for path in list_files(landing / feed.landing, "*.csv", root=landing):
        match = DATE_IN_NAME.search(path.name)
        day = date.fromisoformat(match[1]) if match else None
        files.append(landed_file(landing, path, _file_load_date=day))
    return sorted(files, key=lambda f: (f.attr("_file_load_date") or date.min, f.key))


def _output_columns(feed: Feed) -> list[tuple[str, str]]:
    return [
        *require_columns(feed),
        ("_source_file", "string"),
        ("_load_date", "date"),
        ("_ingested_at", "timestamp"),
    ]


def empty(spark: SparkSession, feed: Feed, ctx: IngestContext) -> DataFrame:
    return spark.createDataFrame([], spark_schema(_output_columns(feed)))


def read(spark: SparkSession, feed: Feed, files: Sequence[LandedFile], ctx: IngestContext) -> Batch:
    from pyspark.sql import functions as F

    columns = require_columns(feed)
    df = (
        spark.read.schema(spark_schema(columns))
        .option("header", True)
        .option("mode", "FAILFAST")
        .csv([spark_path(f.path) for f in files])
    )
    df = with_file_columns(df, spark, files, FILE_ATTRS)
    by_rows = feed.option("load_date_column")
    load_date = F.col("_file_load_date")
    if by_rows is not None:
        load_date = F.coalesce(load_date, F.to_date(F.col(by_rows)))
    missing = [f.key for f in files if f.attr("_file_load_date") is None]
    if missing and by_rows is None:
        raise FeedError(
            f"feed {feed.id}: no ISO date in the name of {', '.join(missing)}; name files "
            "<table>_YYYY-MM-DD.csv or declare meta.floe.load_date_column"
        )
    rows = df.select(
        *[name for name, _ in columns],
        "_source_file",
        load_date.alias("_load_date"),
        batch_timestamp(df.sparkSession, ctx.ingested_at).alias("_ingested_at"),
    )
    try:
        stats = rows.groupBy("_source_file").agg(F.count(F.lit(1)).alias("n")).collect()
    except Exception as exc:  # FAILFAST: Spark's error names the row, ours the files
        raise FeedError(
            f"feed {feed.id}: a reference file does not parse as "
            f"{','.join(n for n, _ in columns)} ({', '.join(f.key for f in files)}): {exc}"
        ) from exc
    counts = {r["_source_file"]: FileCounts(r["n"], r["n"]) for r in stats}
    check_counts(counts, f"feed {feed.id}")
    return Batch(rows=rows, counts=counts)


PROVENANCE = {
    "_source_file": "Landed extract the row came from, relative to the landing root (the ledger key).",
    "_load_date": "The extract's date (from its file name, else its load_date_column).",
    "_ingested_at": "When floe ingested the row; one value per ingest batch.",
    "_load_seq": "Load sequence of the ingest batch: increases in commit order across the warehouse (the marts' watermark, docs/reliability.md).",
}


def provenance_docs(feed: Feed) -> dict[str, str]:
    """Descriptions of the columns this kind adds to the raw table."""
    return dict(PROVENANCE)
