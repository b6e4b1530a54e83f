"""Model config objects (floe.materialize.configs), the cdc presets beside the feed kinds
(floe.feeds.kinds.cdc) and the one graph walk (floe.materialize.graph): no dbt, no Spark."""

from __future__ import annotations

import pytest

from floe.feeds.cdc import model_cdc_config, upstream_feed
from floe.feeds.kinds import KINDS
from floe.feeds.kinds.cdc import KIND_PRESETS, PRESETS, preset_for
from floe.materialize.configs import (
    IncrementalConfig,
    ModelConfigError,
    Scd2Config,
    TableProperties,
    check_unique_key,
)
from floe.materialize.graph import read_nodes, upstream_tables


def test_table_properties_defaults_options_and_tblproperties_in_that_order():
    props = TableProperties.from_options(
        "marts.t",
        write_mode="merge-on-read",
        target_file_size_bytes=1024,
        maintenance={"max_snapshot_age_days": 1.5, "keep_snapshots": 3},
        tblproperties={"write.delete.mode": "copy-on-write"},
    ).as_dict()
    assert props == {
        "format-version": "2",
        "write.merge.mode": "merge-on-read",
        "write.update.mode": "merge-on-read",
        "write.delete.mode": "copy-on-write",  # the model's tblproperties win
        "write.wap.enabled": "true",
        "write.target-file-size-bytes": "1024",
        "history.expire.max-snapshot-age-ms": str(int(1.5 * 86_400_000)),
        "history.expire.min-snapshots-to-keep": "3",
    }
    with pytest.raises(ModelConfigError, match=r"Model marts.t: write_mode 'mor' is not"):
        TableProperties.from_options("marts.t", write_mode="mor")


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("keep_snapshots", "lots"),
        ("keep_snapshots", 0),
        ("keep_snapshots", True),
        ("compact_min_files", 2.5),
        ("max_snapshot_age_days", -1),
        ("max_snapshot_age_days", "7"),  # a quoted number is read as one...
        ("orphan_age_days", float("nan")),
    ],
)
def test_maintenance_options_are_numbers_or_a_compilation_error(option, value):
    if value == "7":  # ...and gives the same property as 7 (it was "7" * 86,400,000)
        props = TableProperties.from_options("marts.t", maintenance={option: value}).as_dict()
        assert props["history.expire.max-snapshot-age-ms"] == str(7 * 86_400_000)
        return
    with pytest.raises(ModelConfigError, match=f"Model marts.t: maintenance option '{option}'"):
        TableProperties.from_options("marts.t", maintenance={option: value})


def test_incremental_strategy_and_unique_key_checks_name_the_model():
    assert IncrementalConfig.from_options("m", "merge", None).strategy == "merge"
    with pytest.raises(
        ModelConfigError, match=r"Invalid incremental strategy provided: x \(model m\)"
    ):
        IncrementalConfig.from_options("m", "x", None)
    with pytest.raises(ModelConfigError, match="Model m: incremental_strategy 'insert_overwrite'"):
        IncrementalConfig.from_options("m", "insert_overwrite", [])
    check_unique_key("m", ["`ID`"], ["id", "name"])
    with pytest.raises(ModelConfigError, match="unique_key columns a, b not in"):
        check_unique_key("m", ["a", "b"], ["id"])


def test_scd2_config_defaults_and_date_checks():
    cfg = Scd2Config.from_options(
        "marts.dim",
        {"unique_key": "id", "scd2_loads": "int_loads", "scd2_initial_eff_date": "2022-01-01"},
    )
    assert (cfg.key_cols, cfg.sentinel, cfg.initial_eff_date, cfg.delete_detection) == (
        ("id",),
        "9999-12-31",
        "2022-01-01",
        "auto",
    )
    assert cfg.as_dict()["full_extract_kinds"] == ["full"]
    with pytest.raises(
        ModelConfigError, match=r"Model marts.dim: scd2 run_date '2022-7-1' is not a date"
    ):
        Scd2Config.from_options(
            "marts.dim", {"unique_key": "id", "scd2_loads": "l", "run_date": "2022-7-1"}
        )
    with pytest.raises(ModelConfigError, match="delete_detection 'gone' is not one of auto"):
        Scd2Config.from_options(
            "marts.dim", {"unique_key": "id", "scd2_loads": "l", "delete_detection": "gone"}
        )


def test_every_preset_a_kind_implies_exists_and_debezium_follows_the_op_column():
    assert set(KIND_PRESETS) <= set(KINDS)
    assert set(KIND_PRESETS.values()) <= set(PRESETS)
    assert (preset_for("dms"), preset_for("flagged_csv"), preset_for("stream", "__op")) == (
        "dms",
        "flag",
        "debezium",
    )
    assert preset_for("stream", "op") is None and preset_for(None) is None


GRAPH = {
    "sources": {
        "source.p.dms.orders": {
            "resource_type": "source",
            "source_name": "dms",
            "name": "orders",
            "schema": "landing",
            "identifier": "orders",
            "source_meta": {"floe": {"kind": "dms"}},
            "config": {"meta": {"floe": {"key": ["order_id"], "partition_by": "day"}}},
        }
    },
    "nodes": {
        "model.p.raw": {
            "resource_type": "model",
            "name": "raw_dms__orders",
            "alias": "orders",
            "schema": "raw",
            "config": {"materialized": "incremental", "schema": "raw"},
            "depends_on": {"nodes": ["source.p.dms.orders"]},
        },
        "model.p.stg": {
            "resource_type": "model",
            "name": "stg_dms__orders",
            "schema": "staging",
            "config": {"materialized": "view"},
            "depends_on": {"nodes": ["model.p.raw", "model.p.stg"]},  # a cycle is walked once
        },
        "model.p.eph": {
            "resource_type": "model",
            "name": "eph",
            "schema": "staging",
            "config": {"materialized": "ephemeral"},
            "depends_on": {"nodes": ["model.p.stg", "model.p.dim"]},
        },
        "model.p.dim": {
            "resource_type": "model",
            "name": "dim_x",
            "alias": None,
            "schema": "marts",
            "config": {"materialized": "table"},
            "depends_on": {"nodes": []},
        },
    },
}
MART = {"depends_on": {"nodes": ["model.p.eph"]}}


def test_one_walk_serves_the_tables_read_and_the_feed_replicated():
    # tables: stops at the raw feed model (a table) and at other tables
    assert upstream_tables(GRAPH, MART) == ["marts.dim_x", "raw.orders"]
    # the feed: through the raw model to its source, validated by the feed reader
    assert [n["name"] for n in read_nodes(GRAPH, ["model.p.eph"], through_raw=True)] == [
        "dim_x",
        "orders",
    ]
    feed = upstream_feed(GRAPH, MART)
    assert feed is not None and (feed.id, feed.key) == ("dms.orders", ("order_id",))


def test_cdc_config_defaults_to_the_feed_and_the_model_wins():
    cfg = model_cdc_config(
        "marts.orders", {}, unique_key=None, partition_by=None, node=MART, graph=GRAPH
    ).as_dict()
    assert (cfg["unique_key"], cfg["partition_by"], cfg["preset"], cfg["feed"]) == (
        ["order_id"],
        ["day"],
        "dms",
        "dms.orders",
    )
    assert cfg["op_column"] == "Op" and cfg["order_by"][0] == "last_update_time"
    cfg = model_cdc_config(
        "marts.orders",
        {"preset": "debezium", "split": True},
        unique_key="id",
        partition_by="p",
        node=MART,
        graph=GRAPH,
    ).as_dict()
    assert (cfg["unique_key"], cfg["partition_by"], cfg["preset"], cfg["split"]) == (
        ["id"],
        ["p"],
        "debezium",
        True,
    )
    with pytest.raises(ModelConfigError, match=r"Model marts.orders: unknown cdc option 'orderby'"):
        model_cdc_config(
            "marts.orders",
            {"orderby": []},
            unique_key="id",
            partition_by=None,
            node=MART,
            graph=GRAPH,
        )


def test_a_bad_feed_declaration_fails_the_cdc_model_naming_both():
    bad = {
        **GRAPH,
        "sources": {
            k: {**v, "source_meta": {"floe": {"kind": "nope"}}} for k, v in GRAPH["sources"].items()
        },
    }
    with pytest.raises(
        ModelConfigError, match=r"Model marts.orders: the feed it replicates: .*kind"
    ):
        model_cdc_config(
            "marts.orders", {}, unique_key="id", partition_by=None, node=MART, graph=bad
        )


def test_a_feed_reaches_jinja_validated_through_one_reader():
    from floe.feeds.declarations import FeedError
    from floe.feeds.sources import feed_node

    node = feed_node(GRAPH, "dms", "orders")
    assert node is not None and node["source_meta"] == {"floe": {"kind": "dms"}}
    assert node["config"]["meta"]["floe"]["key"] == ["order_id"]
    assert feed_node(GRAPH, "dms", "other") is None
    bad = {"sources": {"s": {**GRAPH["sources"]["source.p.dms.orders"], "config": {}}}}
    with pytest.raises(FeedError, match="declare its primary key"):
        feed_node(bad, "dms", "orders")  # a dms feed without a key: refused at compile time
