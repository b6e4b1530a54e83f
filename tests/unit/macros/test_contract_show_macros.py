"""Contracts enforced in the write, untyped nulls typed, `dbt show` of scd2/cdc models
(Jinja only; the adapter suite runs them on Spark: tests/adapter/test_suite_constraints.py)."""

from __future__ import annotations

import pytest

from tests.unit.macros.jinja_harness import CompilerError, Relation, normalize


def contract_model(columns: dict, constraints: list | None = None) -> dict:
    return {
        "name": "t",
        "language": "sql",
        "unrendered_config": {},
        "resource_type": "model",
        "columns": columns,
        "constraints": constraints or [],
    }


@pytest.fixture
def contract(render):
    render.context_set(
        model=contract_model(
            {
                "id": {"constraints": [{"type": "not_null"}, {"type": "primary_key"}]},
                "amount": {"constraints": [{"type": "check", "expression": "amount >= 0"}]},
            },
            [{"type": "unique", "columns": ["id", "amount"], "name": "pair"}],
        ),
        default__get_column_names=lambda: "id, amount",
    )
    return render


def test_constraints_become_assertions_inside_the_write(contract):
    sql = normalize(str(contract.call("floe_enforced_select", "select 1 as id, 2 as amount")))
    assert sql.startswith("select id, amount from (select *, count(1) over (partition by id)")
    assert "count(1) over (partition by id, amount) as floe_key_rows_2" in sql
    assert "assert_true(id is not null, 'marts.t: not_null constraint violated" in sql
    assert "assert_true(coalesce((amount >= 0), true), 'marts.t: check constraint" in sql
    assert "assert_true(floe_key_rows_1 = 1, 'marts.t: primary_key constraint violated" in sql
    assert "unique constraint violated: two rows share id, amount; nothing was written" in sql


def test_no_constraints_leaves_the_select_alone(render):
    render.context_set(model=contract_model({"id": {"constraints": []}}))
    assert render.call("floe_enforced_select", "select 1 as id") == "select 1 as id"


@pytest.mark.parametrize("kind", ["foreign_key", "custom"])
def test_constraints_iceberg_cannot_check_fail_at_compile_time(render, kind):
    render.context_set(
        model=contract_model({"id": {"constraints": [{"type": kind, "expression": "x"}]}})
    )
    with pytest.raises(CompilerError, match=f"floe cannot enforce a {kind} constraint"):
        render.call("floe_enforced_select", "select 1 as id")


def test_untyped_null_columns_are_cast_to_string(render):
    render.adapter.floe_void_columns = lambda sql: ["nothing"]
    render.adapter.floe_query_columns = lambda sql: ["id", "nothing"]
    sql = normalize(str(render.call("floe_typed_select", "select 1 as id, null as nothing")))
    assert sql == (
        "select `id`, cast(`nothing` as string) as `nothing` from ("
        "select 1 as id, null as nothing) as floe_typed"
    )
    render.adapter.floe_void_columns = lambda sql: []
    assert render.call("floe_typed_select", "select 1 as id") == "select 1 as id"


@pytest.fixture
def show(render):
    render.context_set(
        model={"name": "t", "resource_type": "model", "language": "sql"},
        default__get_limit_sql=lambda sql, limit: f"{sql} limit {limit}",
    )
    return render


@pytest.mark.parametrize(
    "config",
    [{"materialized": "scd2"}, {"materialized": "incremental", "incremental_strategy": "cdc"}],
)
def test_show_of_a_change_applying_model_reads_its_table(show, config):
    show.configure(**config)
    show.adapter.get_relation = lambda database, schema, identifier: Relation(schema, identifier)
    sql = normalize(str(show.call("floe__get_limit_sql", "select * from pending", 5)))
    assert sql == "select * from marts.t limit 5"


def test_show_of_an_unbuilt_scd2_model_says_to_build_it(show):
    show.configure(materialized="scd2")
    show.adapter.get_relation = lambda database, schema, identifier: None
    with pytest.raises(CompilerError, match=r"does not exist yet: run `dbt build -s t` first"):
        show.call("floe__get_limit_sql", "select * from pending", 5)


def test_show_of_other_models_runs_their_sql(show):
    show.configure(materialized="table")
    sql = normalize(str(show.call("floe__get_limit_sql", "select 1 as id", 5)))
    assert sql == "select 1 as id limit 5"
