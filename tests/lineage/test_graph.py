"""The project-level graph on hand-written manifests: floe's materializations, feeds,
Python models, snapshots and what must stay unknown (parse only)."""

from __future__ import annotations

import pytest

from floe.lineage import LineageError, LineageGraph, build_graph, mart_coverage
from floe.lineage.cli import render_tree
from floe.lineage.graph import ANY_COLUMN
from tests.lineage.manifests import feed_project, manifest, model, source


def upstream(graph: LineageGraph, text: str) -> set[tuple[str, str, str]]:
    """(source node name, column, kind) of every edge upstream of a column."""
    return {(graph.nodes[e.src[0]].name, e.src[1], e.kind) for e in graph.walk(graph.find(text))}


def test_raw_feed_model_maps_one_to_one_from_the_feed_and_its_landed_files():
    graph = build_graph(feed_project())
    assert graph.nodes["model.shop.raw_customers"].columns[:2] == ["customer_id", "email"]
    assert upstream(graph, "stg_customers.email") == {
        ("raw_customers", "email", "expression"),
        ("shop.customers", "email", "identity"),
        ("landed shop/customers/", "email", "identity"),
    }
    # provenance columns come from the landed files, not from the source's columns
    assert upstream(graph, "stg_customers.load_date") == {
        ("raw_customers", "_load_date", "rename"),
        ("landed shop/customers/", "_load_date", "provenance"),
    }
    # the op column is declared by the feed kind: a provenance column too
    assert ("landed shop/customers/", "status", "provenance") in upstream(
        graph, "stg_customers.status"
    )


def test_scd2_adds_key_and_validity_and_drops_its_flags():
    entries = feed_project()
    entries["nodes"]["model.shop.int_loads"] = model(
        "int_loads",
        "select load_date, count(*) as files from staging.stg_customers group by load_date",
        ["model.shop.stg_customers"],
        layer="intermediate",
    )
    entries["nodes"]["model.shop.dim_customer"] = model(
        "dim_customer",
        "select customer_id, email, status = 'D' as _scd2_deleted from staging.stg_customers",
        ["model.shop.stg_customers", "model.shop.int_loads"],
        layer="marts",
        config={
            "materialized": "scd2",
            "unique_key": "customer_id",
            "scd2_loads": "int_loads",
            "surrogate_key": "customer_sk",
            "valid_from": "rec_eff_dt",
            "valid_to": "rec_exp_dt",
        },
    )
    graph = build_graph(entries)
    dim = graph.nodes["model.shop.dim_customer"]
    assert dim.columns == ["customer_sk", "customer_id", "email", "rec_eff_dt", "rec_exp_dt"]
    sk = graph.upstream_edges(("model.shop.dim_customer", "customer_sk"))
    assert [(graph.nodes[e.src[0]].name, e.src[1], e.kind) for e in sk] == [
        ("stg_customers", "customer_id", "window")
    ]
    eff = graph.upstream_edges(("model.shop.dim_customer", "rec_eff_dt"))
    assert [(graph.nodes[e.src[0]].name, e.src[1]) for e in eff] == [("int_loads", "load_date")]
    # the delete flag decides rows: an indirect input, not a column
    assert ("model.shop.stg_customers", "status", "filter") in dim.indirect
    assert mart_coverage(graph) == (5, 5, [])


def test_cdc_strategy_drops_op_and_underscore_columns():
    entries = manifest(
        (
            "source.shop.shop.events",
            source("events", ["id", "name"], {"kind": "dms", "key": ["id"]}),
        ),
        (
            "model.shop.raw_events",
            model(
                "raw_events",
                None,
                ["source.shop.shop.events"],
                layer="raw",
                language="python",
                config={"materialized": "incremental", "schema": "raw"},
            ),
        ),
        (
            "model.shop.stg_events",
            model("stg_events", "select * from raw.raw_events", ["model.shop.raw_events"]),
        ),
        (
            "model.shop.events",
            model(
                "events",
                "with changes as (select * from staging.stg_events where true) "
                "select * from changes",
                ["model.shop.stg_events"],
                layer="marts",
                config={"materialized": "incremental", "incremental_strategy": "cdc"},
            ),
        ),
    )
    graph = build_graph(entries)
    raw = graph.nodes["model.shop.raw_events"].columns
    assert "Op".lower() in raw and "_source_file" in raw and "last_update_time" in raw
    # DMS preset: `Op` and `_`-prefixed columns never reach the table
    assert graph.nodes["model.shop.events"].columns == ["id", "name", "last_update_time"]
    indirect = {(c, k) for _, c, k in graph.nodes["model.shop.events"].indirect}
    assert ("op", "filter") in indirect and ("_ingested_at", "filter") in indirect


def test_python_model_with_declared_lineage_and_without():
    entries = feed_project()
    entries["nodes"]["model.shop.py_scores"] = model(
        "py_scores",
        None,
        ["model.shop.stg_customers"],
        layer="marts",
        language="python",
        config={"materialized": "table"},
        columns={
            "customer_id": {"meta": {"lineage": ["stg_customers.customer_id"]}},
            "score": {"meta": {}},
        },
    )
    graph = build_graph(entries)
    assert ("stg_customers", "customer_id", "expression") in upstream(
        graph, "py_scores.customer_id"
    )
    score = graph.upstream_edges(("model.shop.py_scores", "score"))
    assert [(e.src, e.kind) for e in score] == [
        (("model.shop.stg_customers", ANY_COLUMN), "unknown")
    ]
    assert graph.nodes["model.shop.py_scores"].status == "undeclared"
    assert mart_coverage(graph)[:2] == (1, 2)


def test_unparseable_model_gets_unknown_edges_never_invented_ones():
    entries = feed_project()
    entries["nodes"]["model.shop.broken"] = model(
        "broken",
        "select from where (",
        ["model.shop.stg_customers"],
        layer="marts",
        columns={"x": {}},
    )
    graph = build_graph(entries)
    node = graph.nodes["model.shop.broken"]
    assert node.status == "unparsed" and "cannot parse" in node.errors[0]
    assert {e.kind for e in graph.upstream_edges(("model.shop.broken", "x"))} == {"unknown"}
    assert not graph.is_complete(("model.shop.broken", "x"))


def test_incremental_filter_on_its_own_table_keeps_every_column_traced():
    """`where x > (select max(x) from {{ this }})`: the model's own columns resolve the
    subquery; no edge comes from the model's own table."""
    entries = feed_project()
    entries["nodes"]["model.shop.fct_emails"] = model(
        "fct_emails",
        "select * from staging.stg_customers where load_date > "
        "(select max(load_date) from marts.fct_emails)",
        ["model.shop.stg_customers"],
        layer="marts",
        config={"materialized": "incremental"},
        columns={"customer_id": {}, "email": {}, "load_date": {}},
    )
    graph = build_graph(entries)
    for column in ("customer_id", "email"):
        edges = graph.upstream_edges(("model.shop.fct_emails", column))
        assert {e.src[0] for e in edges} == {"model.shop.stg_customers"}, edges
        assert graph.is_complete(("model.shop.fct_emails", column))


def test_table_columns_the_sql_does_not_produce_are_unknown():
    entries = feed_project()
    catalog = {
        "nodes": {
            "model.shop.stg_customers": {
                "columns": {
                    "customer_id": {"name": "customer_id", "index": 1, "type": "bigint"},
                    "email": {"name": "email", "index": 2, "type": "string"},
                    "legacy": {"name": "legacy", "index": 3, "type": "string"},
                }
            }
        }
    }
    graph = build_graph(entries, catalog)
    node = graph.nodes["model.shop.stg_customers"]
    assert node.columns == ["customer_id", "email", "legacy"]  # the table's, in its order
    assert [e.kind for e in graph.upstream_edges((node.id, "legacy"))] == ["unknown"]
    assert any("load_date" in e for e in node.errors)  # SQL column missing from the table


def test_ephemeral_model_stays_a_node():
    entries = feed_project()
    entries["nodes"]["model.shop.int_eph"] = model(
        "int_eph",
        "select customer_id, email from staging.stg_customers",
        ["model.shop.stg_customers"],
        layer="intermediate",
        config={"materialized": "ephemeral"},
    )
    entries["nodes"]["model.shop.mart"] = model(
        "mart",
        "with __dbt__cte__int_eph as (select customer_id, email from staging.stg_customers) "
        "select email as contact from __dbt__cte__int_eph",
        ["model.shop.int_eph"],
        layer="marts",
    )
    graph = build_graph(entries)
    edges = graph.upstream_edges(("model.shop.mart", "contact"))
    assert [(e.src, e.kind) for e in edges] == [(("model.shop.int_eph", "email"), "rename")]


def test_snapshot_meta_columns_come_from_key_and_updated_at():
    entries = feed_project()
    entries["nodes"]["snapshot.shop.customers_snapshot"] = model(
        "customers_snapshot",
        "select customer_id, email, load_date from staging.stg_customers",
        ["model.shop.stg_customers"],
        layer="snapshots",
        resource_type="snapshot",
        config={"materialized": "snapshot", "unique_key": "customer_id", "updated_at": "load_date"},
    )
    graph = build_graph(entries)
    node = graph.nodes["snapshot.shop.customers_snapshot"]
    assert {"dbt_scd_id", "dbt_valid_from", "dbt_valid_to"} <= set(node.columns)
    assert ("stg_customers", "load_date", "expression") in upstream(
        graph, "customers_snapshot.dbt_valid_from"
    )


def test_json_round_trip_and_terminal_tree():
    graph = build_graph(feed_project())
    again = LineageGraph.from_json(graph.to_json())
    key = again.find("stg_customers.email")
    assert render_tree(again, key) == render_tree(graph, graph.find("stg_customers.email"))
    assert render_tree(again, key)[1].startswith("  <- raw_customers.email [expression")


def test_find_names_what_is_wrong():
    graph = build_graph(feed_project())
    with pytest.raises(LineageError, match="no column 'nope'"):
        graph.find("stg_customers.nope")
    with pytest.raises(LineageError, match="no model"):
        graph.find("missing.email")
    with pytest.raises(LineageError, match=r"<model>\.<column>"):
        graph.find("email")
