"""Redeliveries of the ``stream`` kind: a sequence number seen before becomes a
``duplicate`` quarantine row (docs/feeds.md: redeliveries).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from floe.decode.records import DUPLICATE
from floe.feeds.declarations import Feed
from floe.feeds.ledger import FileCounts

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def duplicates(
    spark: SparkSession, feed: Feed, staged: DataFrame, low: str, high: str
) -> DataFrame:
    """``_source_file, _offset, error_detail`` of good staged rows that are redeliveries.

    A record is a redelivery when its sequence number is already in ``raw.<feed>``, or
    an earlier row of this batch (by file, then offset) carries it. The check shuffles
    only a 64-bit hash of each good row's sequence number; rows whose hash is seen twice
    (or in the raw table, read only in the batch's sequence-number range, which Iceberg
    prunes by file statistics) are compared exactly.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    good = staged.where(F.col("error_code").isNull() & F.col("_sequence_number").isNotNull())
    new_hashes = good.select(F.xxhash64("_sequence_number").alias("h"), F.lit(0).alias("old"))
    old_rows = None
    if spark.catalog.tableExists(feed.raw_table):
        old_rows = (
            spark.table(feed.raw_table)
            .where(F.col("_sequence_number").between(low, high))
            .select("_sequence_number")
            .distinct()
        )
        new_hashes = new_hashes.unionByName(
            old_rows.select(F.xxhash64("_sequence_number").alias("h"), F.lit(1).alias("old"))
        )
    suspects = new_hashes.groupBy("h").count().where(F.col("count") > 1).select("h")
    rows = good.join(
        F.broadcast(suspects), F.xxhash64("_sequence_number") == F.col("h"), "left_semi"
    ).select("_sequence_number", "_source_file", "_offset")
    order = Window.partitionBy("_sequence_number").orderBy("_source_file", "_offset")
    ranked = rows.select("*", F.row_number().over(order).alias("n"))
    first = F.first(F.struct("_source_file", "_offset")).over(order)
    ranked = ranked.select("*", first.alias("first"))
    if old_rows is not None:
        ranked = ranked.join(
            old_rows.select("_sequence_number", F.lit(True).alias("in_raw")),
            "_sequence_number",
            "left",
        )
    else:
        ranked = ranked.select("*", F.lit(None).cast("boolean").alias("in_raw"))
    return ranked.where(F.col("in_raw") | (F.col("n") > 1)).select(
        "_source_file",
        "_offset",
        F.when(
            F.col("in_raw"),
            F.concat(
                F.lit("sequence number "),
                F.col("_sequence_number"),
                F.lit(f" is already in {feed.raw_table} (a redelivery)"),
            ),
        )
        .otherwise(
            F.concat(
                F.lit("sequence number "),
                F.col("_sequence_number"),
                F.lit(" was already read from "),
                F.col("first._source_file"),
                F.lit(" at byte "),
                F.col("first._offset").cast("string"),
                F.lit(" (a redelivery)"),
            )
        )
        .alias("dup_detail"),
    )


def _raw_holds_range(spark: SparkSession, feed: Feed, low: str, high: str) -> bool:
    """Whether ``raw.<feed>`` has a row whose sequence number is in [low, high]."""
    from pyspark.sql import functions as F

    if not spark.catalog.tableExists(feed.raw_table):
        return False
    rows = spark.table(feed.raw_table).where(F.col("_sequence_number").between(low, high))
    return bool(rows.select("_sequence_number").limit(1).collect())


def mark_duplicates(
    spark: SparkSession,
    feed: Feed,
    staged: DataFrame,
    staging: Path,
    counts: dict[str, FileCounts],
    low: str | None,
    high: str | None,
    *,
    unique: bool = False,
) -> DataFrame:
    """``staged`` with redeliveries turned into ``duplicate`` rows; ``counts`` adjusted.

    ``unique``: the decode saw no two good rows of the batch share a sequence number
    (each piece's strictly increasing, the pieces' ranges apart). Then only the raw
    table can hold a redelivery, and a probe of its rows in the batch's range (pruned
    by Iceberg's file statistics) that finds none answers without the shuffle.
    """
    from pyspark.sql import functions as F

    if low is None or high is None:
        return staged
    if unique and not _raw_holds_range(spark, feed, low, high):
        return staged
    found = duplicates(spark, feed, staged, low, high)
    # Most batches hold no redelivery: one action answers that, with nothing written.
    if not found.groupBy("_source_file").count().collect():
        return staged
    # Written once, so the rows marked and the counts adjusted are the same rows.
    dup_dir = staging.with_name(staging.name + "-duplicates")
    found.write.parquet(str(dup_dir))
    dups = spark.read.parquet(str(dup_dir))
    per_file = {r[0]: r[1] for r in dups.groupBy("_source_file").count().collect()}
    for key, n in per_file.items():
        c = counts[key]
        counts[key] = FileCounts(
            c.records_in, c.loaded - n, c.quarantined + n, c.checksum, c.skipped
        )
    marked = staged.join(dups, ["_source_file", "_offset"], "left")
    is_dup = F.col("dup_detail").isNotNull()
    return marked.select(
        *(
            F.when(is_dup, F.lit(DUPLICATE)).otherwise(F.col(c)).alias(c)
            if c == "error_code"
            else F.when(is_dup, F.col("dup_detail")).otherwise(F.col(c)).alias(c)
            if c == "error_detail"
            else F.when(is_dup, F.to_json("record")).otherwise(F.col(c)).alias(c)
            if c == "raw_data"
            else F.col(c)
            for c in staged.columns
        )
    )
