"""A feed kind written for the tests: ``lines``, one record per line of ``*.txt`` files.

It is what adding a kind takes (docs/feeds.md, "Adding a feed kind"): this one module,
and one line in ``floe.feeds.kinds.KINDS`` (the test adds it with monkeypatch). Blank
lines are quarantined with code ``blank_line``, so the counts have something to add up.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from floe.feeds.declarations import Feed, FeedError
from floe.feeds.files import LandedFile, landed_file, list_files
from floe.feeds.kinds.base import Batch, IngestContext, spark_schema
from floe.feeds.ledger import FileCounts

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

OPTIONS = frozenset({"min_length"})
COLUMNS = [
    ("line", "string"),
    ("line_number", "int"),
    ("_source_file", "string"),
    ("_ingested_at", "timestamp"),
]


def validate(feed: Feed) -> None:
    if not isinstance(feed.option("min_length", 0), int):
        raise FeedError(f"feed {feed.id} (lines): min_length must be an integer")


def discover(feed: Feed, landing: Path) -> list[LandedFile]:
    return [landed_file(landing, p) for p in list_files(landing / feed.landing, "*.txt", landing)]


def empty(spark: SparkSession, feed: Feed, ctx: IngestContext) -> DataFrame:
    return spark.createDataFrame([], spark_schema(COLUMNS))


def read(spark: SparkSession, feed: Feed, files: Sequence[LandedFile], ctx: IngestContext) -> Batch:
    from pyspark.sql import functions as F

    rows, bad, counts = [], [], {}
    for f in files:
        lines = f.path.read_text().splitlines()
        good = [(text, n, f.key) for n, text in enumerate(lines, 1) if text.strip()]
        blank = [(f.key, n) for n, text in enumerate(lines, 1) if not text.strip()]
        rows += good
        bad += blank
        counts[f.key] = FileCounts(len(lines), len(good), len(blank))
    stamp = F.lit(ctx.ingested_at).cast("timestamp").alias("_ingested_at")
    schema = "line string, line_number int, _source_file string"
    raw = spark.createDataFrame(rows, schema).select("*", stamp)
    quarantine = spark.createDataFrame(bad, "_source_file string, n int").select(
        F.lit(feed.name).alias("feed"),
        "_source_file",
        F.lit(None).cast("string").alias("_sequence_number"),
        F.lit(None).cast("string").alias("_partition_key"),
        F.lit(None).cast("timestamp").alias("_arrival_ts"),
        F.lit("").alias("raw_data"),
        F.lit(None).cast("binary").alias("raw_bytes"),
        F.lit("blank_line").alias("error_code"),
        F.concat(F.lit("line "), F.col("n").cast("string"), F.lit(" is blank")).alias(
            "error_detail"
        ),
        stamp,
    )
    return Batch(rows=raw, counts=counts, quarantine=quarantine)


def provenance_docs(feed: Feed) -> dict[str, str]:
    return {
        "_source_file": "Landed file the line came from.",
        "_ingested_at": "When floe ingested the line.",
    }
