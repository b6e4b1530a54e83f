"""The docs site's quarantine page: per feed code counts and examples, PII feeds masked."""

from __future__ import annotations

import json

import pytest

from floe.docsite.quarantine import (
    mask_payload,
    personal_feeds,
    quarantine_page,
    read_quarantine,
    write_quarantine_page,
)
from floe.feeds.ledger import QUARANTINE, QUARANTINE_COLUMNS, ensure_tables

MANIFEST = {
    "sources": {
        "source.floe.streams.rides": {
            "name": "rides",
            "columns": {"rider_id": {"meta": {"subject_key": "rider_id"}}},
        },
        "source.floe.dms.tickets": {"name": "tickets", "columns": {"seat": {"meta": {}}}},
        "source.floe.streams.people": {
            "name": "people",
            "config": {"meta": {"floe": {"fields": {"email": {"pii": True}}}}},
        },
    }
}


def test_personal_feeds_from_the_declarations():
    assert personal_feeds(MANIFEST) == {"rides", "people"}


def test_masking_keeps_json_shape_and_hides_every_value():
    masked = json.loads(mask_payload('{"rider_id": 42, "name": "Ann", "tags": ["a"], "x": null}'))
    assert masked == {"rider_id": "•••", "name": "•••", "tags": ["•••"], "x": None}
    assert mask_payload("Ann,555-1234") == "••• (12 characters masked)"


@pytest.mark.integration
def test_page_counts_codes_per_feed_and_masks_personal_feeds(spark, lakehouse, tmp_path):
    ensure_tables(spark)
    rows = [
        ("rides", "r1.jsonl", "1", '{"rider_id": 4711, "fare": "x"}', "bad_type", "fare"),
        ("rides", "r1.jsonl", "2", '{"rider_id": 4712}', "bad_type", "fare"),
        ("rides", "r2.jsonl", "1", "not json", "bad_json", "line 1"),
        ("tickets", "t.csv", "3", "A,<b>12</b>", "bad_csv", "columns"),
    ]
    keys = ("feed", "_source_file", "_sequence_number", "raw_data", "error_code", "error_detail")
    names = [name for name, _ in QUARANTINE_COLUMNS]
    data = [tuple(dict(zip(keys, r, strict=True)).get(n) for n in names) for r in rows]
    ddl = ", ".join(f"{name} {kind}" for name, kind in QUARANTINE_COLUMNS)
    spark.createDataFrame(data, ddl).writeTo(QUARANTINE).append()
    feeds = read_quarantine(spark, examples_per_code=1)
    assert [(f.feed, f.total, f.codes) for f in feeds] == [
        ("rides", 3, [("bad_type", 2), ("bad_json", 1)]),
        ("tickets", 1, [("bad_csv", 1)]),
    ]
    assert [e.code for e in feeds[0].examples] == ["bad_json", "bad_type"]  # one per code

    (tmp_path / "manifest.json").write_text(json.dumps(MANIFEST))
    assert write_quarantine_page(spark, tmp_path) == 4
    page = (tmp_path / "quarantine.html").read_text(encoding="utf-8")
    assert "4711" not in page and "not json" not in page  # rides: personal, masked
    assert "&quot;rider_id&quot;: &quot;•••&quot;" in page
    assert "A,&lt;b&gt;12&lt;/b&gt;" in page  # tickets: shown, escaped
    assert quarantine_page([], set()).count("Nothing is quarantined") == 1
