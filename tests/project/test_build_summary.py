"""`floe build`'s summary: per feed, records loaded and quarantined with the top codes."""

from __future__ import annotations

import pytest

from floe.build import FeedIntake, intake_lines, intake_summary
from floe.feeds.ledger import (
    LANDED_FILES,
    LANDED_FILES_COLUMNS,
    QUARANTINE,
    QUARANTINE_COLUMNS,
    ensure_tables,
)


def _append(spark, table: str, columns, rows: list[dict]) -> None:
    names = [name for name, _ in columns]
    ddl = ", ".join(f"{name} {kind}" for name, kind in columns)
    data = [tuple(row.get(n) for n in names) for row in rows]
    spark.createDataFrame(data, ddl).writeTo(table).append()


pytestmark = pytest.mark.integration


def test_intake_summary_counts_per_feed_with_top_error_codes(spark, lakehouse):
    assert intake_lines(intake_summary(spark)) == []  # nothing ingested yet: no lines
    ensure_tables(spark)
    files = [
        ("orders", "a.jsonl", 10, 3),
        ("orders", "b.jsonl", 5, 1),
        ("customers", "c.csv", 7, 0),
    ]
    _append(
        spark,
        LANDED_FILES,
        LANDED_FILES_COLUMNS,
        [
            {"feed": f, "_source_file": k, "loaded": ld, "quarantined": q, "records_in": ld + q}
            for f, k, ld, q in files
        ],
    )
    codes = [
        ("a.jsonl", "schema_mismatch"),
        ("a.jsonl", "schema_mismatch"),
        ("a.jsonl", "bad_json"),
        ("b.jsonl", "unknown_schema"),
    ]
    _append(
        spark,
        QUARANTINE,
        QUARANTINE_COLUMNS,
        [{"feed": "orders", "_source_file": k, "error_code": c} for k, c in codes],
    )
    intakes = intake_summary(spark, top=2)
    assert intakes == [
        FeedIntake("customers", 7, 0, ()),
        FeedIntake("orders", 15, 4, (("schema_mismatch", 2), ("bad_json", 1))),
    ]
    lines = intake_lines(intakes)
    assert lines[1].split() == ["customers", "7", "0", "-"]
    assert lines[2].split()[:3] == ["orders", "15", "4"]
    assert lines[2].endswith("schema_mismatch 2, bad_json 1")
    assert lines[-1].split()[:4] == ["(all", "feeds)", "22", "4"]
