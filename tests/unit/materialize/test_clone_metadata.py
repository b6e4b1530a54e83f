"""A clone's Iceberg metadata from its source's (pure Python: no SparkSession).

docs/decisions/0042-dbt-clone-on-iceberg.md: the current snapshot only, a UUID and a
location of its own, no metadata log, no write-path pins, `gc.enabled=false`.
"""

from __future__ import annotations

import json

import pytest
from dbt.adapters.capability import Capability

from floe.adapter import FloeAdapter
from floe.materialize.clone import (
    CloneError,
    Origin,
    clone_metadata,
    parse_origins,
    table_name,
    tag_clones,
    tag_of,
)

SOURCE = {
    "format-version": 2,
    "table-uuid": "11111111-1111-1111-1111-111111111111",
    "location": "file:/wh/marts/orders",
    "last-sequence-number": 3,
    "last-updated-ms": 1,
    "last-column-id": 7,
    "current-schema-id": 1,
    "schemas": [{"type": "struct", "schema-id": 1, "fields": []}],
    "properties": {
        "write.data.path": "file:/elsewhere/data",
        "write.metadata.path": "file:/elsewhere/metadata",
        "history.expire.min-snapshots-to-keep": "2",
    },
    "current-snapshot-id": 30,
    "refs": {
        "main": {"snapshot-id": 30, "type": "branch"},
        "t": {"snapshot-id": 10, "type": "tag"},
    },
    "snapshots": [
        {"snapshot-id": 10, "sequence-number": 1, "timestamp-ms": 100},
        {"snapshot-id": 20, "parent-snapshot-id": 10, "sequence-number": 2, "timestamp-ms": 200},
        {"snapshot-id": 30, "parent-snapshot-id": 20, "sequence-number": 3, "timestamp-ms": 300},
    ],
    "snapshot-log": [{"timestamp-ms": 100, "snapshot-id": 10}],
    "metadata-log": [
        {"timestamp-ms": 100, "metadata-file": "file:/wh/marts/orders/metadata/1.json"}
    ],
    "statistics": [{"snapshot-id": 20}, {"snapshot-id": 30}],
}


def test_clone_keeps_only_the_current_snapshot_under_its_own_identity():
    origins = [Origin("marts.orders", 30), Origin("raw.base", 5)]
    doc = json.loads(
        clone_metadata(
            json.dumps(SOURCE),
            location="file:/wh/dev/.floe-clones/o-1",
            source="marts.orders",
            origins=origins,
        )
    )
    assert doc["table-uuid"] != SOURCE["table-uuid"]
    assert doc["location"] == "file:/wh/dev/.floe-clones/o-1"
    assert [s["snapshot-id"] for s in doc["snapshots"]] == [30]
    assert doc["refs"] == {"main": {"snapshot-id": 30, "type": "branch"}}
    assert doc["snapshot-log"] == [{"timestamp-ms": 300, "snapshot-id": 30}]
    assert doc["metadata-log"] == []  # a commit of the clone never deletes the source's
    assert doc["statistics"] == [{"snapshot-id": 30}]
    assert doc["last-sequence-number"] == 3  # the files' sequence numbers stay valid
    props = doc["properties"]
    assert "write.data.path" not in props and "write.metadata.path" not in props
    assert props["gc.enabled"] == "false"
    assert props["history.expire.min-snapshots-to-keep"] == "2"
    assert props["floe.clone.source"] == "marts.orders"
    assert parse_origins(props["floe.clone.origins"]) == origins


def test_clone_of_a_table_without_snapshots_is_empty():
    empty = {**SOURCE, "current-snapshot-id": -1, "snapshots": [], "refs": {}}
    doc = json.loads(clone_metadata(json.dumps(empty), location="l", source="s.t", origins=[]))
    assert doc["snapshots"] == [] and doc["refs"] == {} and doc["current-snapshot-id"] == -1


def test_names_reaching_sql_are_identifiers_and_tags_map_back_to_their_clone():
    assert table_name("dev_marts", "orders") == "dev_marts.orders"
    with pytest.raises(CloneError, match="not a plain identifier"):
        table_name("marts", "orders`; drop table x")
    assert tag_of("dev__x.orders") == "floe_clone__dev__x__orders"
    assert "dev__x.orders" in tag_clones(tag_of("dev__x.orders"))


def test_an_origin_that_is_not_schema_table_at_snapshot_is_refused_not_skipped():
    assert parse_origins("marts.a@1, dev.b@22,") == [Origin("marts.a", 1), Origin("dev.b", 22)]
    assert parse_origins(None) == []
    for bad in ("marts.a@x", "marts.a", "a@1", "marts.a`; drop table t@1", "x.y.z@3"):
        with pytest.raises(CloneError, match=r"schema\.table@snapshot-id"):
            parse_origins(bad)


def test_microbatch_batches_run_one_at_a_time():
    # docs/decisions/0026-microbatch-window-merge.md: concurrent_batches is not honoured
    assert not FloeAdapter.supports(Capability.MicrobatchConcurrency)
