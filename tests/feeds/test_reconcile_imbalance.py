"""The raw models' reconcile post-hook finds a file whose records do not add up.

`floe.feeds.ledger.reconcile` counts, per landed file of a feed, the manifest row in
`raw.landed_files`, the file's rows in the raw table and its rows in `raw.quarantine`, in
one aggregation over the three tables stacked. Hand-made tables, so the counts are known:
a balanced file is not reported, an unbalanced one is, with the counts that show why.
"""

from __future__ import annotations

import datetime as dt

import pytest

from floe.feeds.declarations import Feed
from floe.feeds.ledger import LANDED_FILES, QUARANTINE, ensure_tables, reconcile

pytestmark = pytest.mark.integration

FEED = Feed(source="probe", name="reconcile_probe", kind="csv", landing="probe")
OTHER = "other_feed"
NOW = dt.datetime(2026, 1, 1, 12, 0, 0)


def _append(spark, table: str, rows: list[dict]) -> None:
    schema = spark.table(table).schema
    full = [tuple(row.get(f.name) for f in schema.fields) for row in rows]
    spark.createDataFrame(full, schema).writeTo(table).append()


def _manifest(feed: str, source_file: str, records_in: int, loaded: int, bad: int) -> dict:
    return {
        "feed": feed,
        "_source_file": source_file,
        "bytes": 100,
        "modified_at": NOW,
        "records_in": records_in,
        "loaded": loaded,
        "quarantined": bad,
        "_ingested_at": NOW,
    }


def _bad(feed: str, source_file: str) -> dict:
    return {"feed": feed, "_source_file": source_file, "error_code": "E_PARSE", "_ingested_at": NOW}


def _raw_table(spark, rows: list[tuple[str, int]]) -> None:
    """The ledger tables and the feed's raw table holding ``rows`` (file, value)."""
    ensure_tables(spark)
    spark.sql(f"create table {FEED.raw_table} (_source_file string, v int) using iceberg")
    spark.createDataFrame(rows, "_source_file string, v int").writeTo(FEED.raw_table).append()


def test_reconcile_reports_the_unbalanced_file_only(spark, lakehouse):
    raw = [("ok.csv", 1), ("ok.csv", 2), ("short.csv", 1), ("short.csv", 2), ("short.csv", 3)]
    _raw_table(spark, [*raw, ("unlisted.csv", 1)])
    _append(
        spark,
        LANDED_FILES,
        [
            # ok.csv: 3 in = 2 raw rows + 1 quarantined.
            _manifest(FEED.name, "ok.csv", 3, 2, 1),
            # short.csv: the manifest says 5 in, the tables hold 3 raw + 1 quarantined.
            _manifest(FEED.name, "short.csv", 5, 4, 1),
            # Another feed's file of the same name and its quarantine row are not counted.
            _manifest(OTHER, "ok.csv", 1, 0, 1),
        ],
    )
    _append(
        spark,
        QUARANTINE,
        [_bad(FEED.name, "ok.csv"), _bad(FEED.name, "short.csv"), _bad(OTHER, "ok.csv")],
    )

    found = {i.source_file: i for i in reconcile(spark, FEED)}

    assert sorted(found) == ["short.csv", "unlisted.csv"]
    short = found["short.csv"]
    assert (short.records_in, short.loaded, short.quarantined) == (5, 3, 1)
    # Raw rows with no manifest row are an imbalance too (records_in unknown).
    unlisted = found["unlisted.csv"]
    assert (unlisted.records_in, unlisted.loaded, unlisted.quarantined) == (None, 1, 0)
    assert "not in raw.landed_files" in str(unlisted)


def test_reconcile_reports_nothing_when_every_file_adds_up(spark, lakehouse):
    _raw_table(spark, [("a.csv", 1), ("a.csv", 2), ("b.csv", 1)])
    _append(
        spark,
        LANDED_FILES,
        [
            _manifest(FEED.name, "a.csv", 2, 2, 0),
            _manifest(FEED.name, "b.csv", 2, 1, 1),
            # A file with nothing loaded and nothing quarantined balances at zero.
            _manifest(FEED.name, "empty.csv", 0, 0, 0),
        ],
    )
    _append(spark, QUARANTINE, [_bad(FEED.name, "b.csv")])

    assert reconcile(spark, FEED) == []
