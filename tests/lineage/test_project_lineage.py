"""Lineage of every model of this project, and hand-checked expectations for marts.

The project is compiled once (``dbt compile`` in-process on this run's lakehouse, no
build) and its graph built parse-only (no catalog). The expectations below were written
from reading the SQL of the models and the contracts of floe's materializations
(docs/scd2.md, docs/cdc.md), not from the tool's output.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from floe.lineage import LineageGraph, build_graph, mart_coverage

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def manifest(spark, tmp_path_factory: pytest.TempPathFactory) -> dict:
    from floe.dbt_runner import run_dbt

    target = tmp_path_factory.mktemp("lineage_target")
    run = run_dbt(["compile"], project=ROOT, target_path=target, quiet=True)
    assert run.success, run.failures or run.exception
    return dict(json.loads((target / "manifest.json").read_text()))


@pytest.fixture(scope="module")
def graph(manifest: dict) -> LineageGraph:
    return build_graph(manifest, None, ROOT)


def direct(graph: LineageGraph, model: str) -> dict[str, set[tuple[str, str, str]]]:
    node = next(n for n in graph.nodes.values() if n.name == model)
    return {
        col: {
            (graph.nodes[e.src[0]].name, e.src[1], e.kind)
            for e in graph.upstream_edges((node.id, col))
        }
        for col in node.columns
    }


def indirect(graph: LineageGraph, model: str) -> set[tuple[str, str, str]]:
    node = next(n for n in graph.nodes.values() if n.name == model)
    return {(graph.nodes[s].name, c, k) for s, c, k in node.indirect}


def path(graph: LineageGraph, column: str) -> list[tuple[str, str, str]]:
    """The single upstream chain of a column, nearest first (fails if it branches)."""
    key = graph.find(column)
    chain = []
    while True:
        edges = graph.upstream_edges(key)
        if not edges:
            return chain
        assert len(edges) == 1, f"{key} has {len(edges)} upstream edges"
        key = edges[0].src
        chain.append((graph.nodes[key[0]].name, key[1], edges[0].kind))


def test_every_model_of_the_project_is_traced(manifest: dict, graph: LineageGraph):
    models = {
        uid
        for uid, n in manifest["nodes"].items()
        if n["resource_type"] in ("model", "seed", "snapshot")
    }
    assert models <= set(graph.nodes)
    problems = {
        graph.nodes[uid].name: (graph.nodes[uid].status, graph.nodes[uid].errors)
        for uid in models
        if graph.nodes[uid].status != "ok" or graph.nodes[uid].errors
    }
    assert problems == {}
    assert all(graph.nodes[uid].columns for uid in models)
    assert not [e for e in graph.edges if e.kind == "unknown"]
    complete, total, missing = mart_coverage(graph)
    assert (complete, missing) == (total, []) and total > 100


def test_dim_customer_scd2(graph: LineageGraph):
    state = "int_customers__state"
    assert direct(graph, "dim_customer") == {
        # scd2: row_number() over the unique key, in key order
        "customer_sk": {(state, "customer_id", "window")},
        "customer_id": {(state, "customer_id", "identity")},
        "first_name": {(state, "first_name", "identity")},
        "last_name": {(state, "last_name", "identity")},
        "employer_name": {(state, "employer_name", "identity")},
        "email_id": {(state, "email_id", "identity")},
        "city": {(state, "city", "identity")},
        "country": {(state, "country", "identity")},
        # validity is the applied load's date (scd2_loads: int_customers__loads)
        "rec_eff_dt": {("int_customers__loads", "load_date", "expression")},
        "rec_exp_dt": {("int_customers__loads", "load_date", "expression")},
    }
    # the delete flag only decides which rows expire
    assert indirect(graph, "dim_customer") == {(state, "_scd2_deleted", "filter")}
    assert path(graph, "dim_customer.email_id") == [
        (state, "email_id", "identity"),
        ("stg_customers__address", "email_id", "identity"),
        ("raw_customers__address", "email_id", "identity"),
        ("customers.customer_address", "email_id", "identity"),
        ("landed customers/customer_address/", "email_id", "identity"),
    ]
    # int_customers__state: master LEFT JOIN address, latest row per key
    state_edges = direct(graph, state)
    assert state_edges["email_id"] == {("stg_customers__address", "email_id", "identity")}
    assert state_edges["_scd2_deleted"] == {
        ("stg_customers__master", "rec_source_status", "expression")
    }
    assert ("stg_customers__address", "customer_id", "join") in indirect(graph, state)
    # every pending load in one rendering: the loads are joined, not filtered to one
    assert ("int_customers__loads", "load_date", "join") in indirect(graph, state)
    assert "_scd2_load" not in direct(graph, "dim_customer")


def test_fct_orders_point_in_time_join(graph: LineageGraph):
    orders, dim = "stg_streams__orders", "dim_product_priority"
    assert direct(graph, "fct_orders") == {
        "sequence_number": {(orders, "sequence_number", "identity")},
        "arrival_ts": {(orders, "arrival_ts", "identity")},
        "customer_id": {(orders, "customer_id", "identity")},
        "cost": {(orders, "cost", "identity")},
        "price": {(dim, "price", "identity")},
        "item": {(orders, "item", "identity")},
        "priority": {(dim, "priority", "identity")},
    }
    # as_of(): the order's time between the version's validity, on the same item
    assert indirect(graph, "fct_orders") == {
        (orders, "item", "join"),
        (orders, "arrival_ts", "join"),
        (dim, "item", "join"),
        (dim, "valid_from", "join"),
        (dim, "valid_to", "join"),
    }
    assert path(graph, "fct_orders.item") == [
        (orders, "item", "identity"),
        ("raw_streams__orders", "dish", "rename"),
        ("streams.orders", "dish", "identity"),  # a field of the orders registry schema
        ("landed streams/orders/", "dish", "identity"),
    ]
    assert path(graph, "fct_orders.priority")[-1] == (
        "landed reference/product_priority/",
        "priority",
        "identity",
    )


def test_mlb_data_cdc(graph: LineageGraph):
    stg = "stg_dms__mlb_data"
    payload = ["mlb_id", "season", "mlb_name", "mlb_pos", "mlb_team", "bats", "throws"]
    payload += ["birth_year", "last_update_time"]
    # the dms preset: Op and the `_` provenance columns never reach the replica
    assert direct(graph, "mlb_data") == {c: {(stg, c, "identity")} for c in payload}
    assert indirect(graph, "mlb_data") == {
        (stg, c, "filter")
        for c in (
            "op",
            "_source_file",
            "_row_in_file",
            "_load_kind",
            "_load_date",
            "_ingested_at",
            "_load_seq",
        )
    }
    assert path(graph, "mlb_data.last_update_time")[-1] == (
        "landed dms/dms_sample/mlb_data/",
        "last_update_time",
        "provenance",
    )


def test_unicorn_rides_struct_fields(graph: LineageGraph):
    assert path(graph, "unicorn_rides.customer_first_name") == [
        ("stg_streams__unicorn_rides", "customer_first_name", "identity"),
        ("raw_streams__unicorn_rides", "customer", "field"),
        ("streams.unicorn_rides", "customer", "identity"),
        ("landed streams/unicorn_rides/", "customer", "identity"),
    ]
    edge = graph.upstream_edges(graph.find("stg_streams__unicorn_rides.customer_first_name"))[0]
    assert edge.path == ("first_name",)
