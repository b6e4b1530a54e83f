"""The raw layer's glue to dbt: a raw model is ``return dbt.source("<source>", "<feed>")``.

floe's Python materialization (the adapter's ``floe_py_write``) hands the compiled
model a loader that, for a source declared as a feed, ingests the feed's new landed
files instead of reading a table (docs/feeds.md). The feed declaration arrives as the
source node of dbt's graph, so the raw model needs no Python of its own:

.. code-block:: python

    def model(dbt, session):
        dbt.config(materialized="incremental")
        return dbt.source("<source>", "<feed>")

After the rows are committed, the ``floe_reconcile_feed`` post-hook proves that
every landed file's records add up.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from floe.feeds.declarations import Feed
from floe.feeds.ingest import ingest, reconcile_or_raise
from floe.feeds.sources import feed_from_node
from floe.runtime.settings import Settings

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def feed_loader(
    spark: SparkSession,
    settings: Settings,
    feed_nodes: Mapping[str, Mapping[str, Any]],
    raw_exists: bool,
) -> Callable[[str], DataFrame]:
    """The ``load_df_function`` of a Python model: feeds ingest, anything else is a table.

    ``settings`` are the adapter's connection settings (``floe_settings`` in the compiled
    model's namespace).
    """

    def load(relation: str) -> DataFrame:
        node = feed_nodes.get(relation)
        if node is None:
            return spark.table(relation)
        feed = feed_from_node(node)
        if feed is None:
            return spark.table(relation)
        return ingest_for_model(spark, settings, feed, raw_exists)

    return load


def ingest_for_model(
    spark: SparkSession, settings: Settings, feed: Feed, raw_exists: bool
) -> DataFrame:
    result = ingest(
        spark,
        feed,
        raw_exists=raw_exists,
        settings=settings,
        project_dir=settings.dbt_project_dir(),
    )
    return result.rows


def reconcile_nodes(spark: SparkSession, feed_nodes: list[Mapping[str, Any]]) -> None:
    """The post-hook's work: reconcile the feeds this model ingested (raises on imbalance)."""
    for node in feed_nodes:
        feed = feed_from_node(node)
        if feed is not None:
            reconcile_or_raise(spark, feed)
