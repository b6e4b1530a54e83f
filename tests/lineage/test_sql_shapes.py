"""Column lineage of one query, shape by shape (parse only: no Spark, no dbt).

Each test states the edges a reader would draw by hand: output column -> the
``schema.table.column`` it reads, with the transformation on the edge.
"""

from __future__ import annotations

import pytest

from floe.lineage.sql import LineageParseError, QueryLineage, query_lineage

SCHEMA = {
    "raw.orders": {
        "order_id": "bigint",
        "customer_id": "bigint",
        "amount": "string",
        "status": "string",
        "items": "array<string>",
        "ordered_at": "timestamp",
    },
    "raw.customers": {"customer_id": "bigint", "email": "string", "country": "string"},
    "raw.rides": {
        "request_id": "string",
        "customer": "struct<first_name:string,address:struct<city:string>>",
        "fare": "double",
    },
}


def edges(result: QueryLineage) -> dict[str, dict[str, str]]:
    """output column -> {"schema.table.column[.field]": kind}."""
    return {
        name: {str(ref): kind for ref, kind in col.refs.items()}
        for name, col in result.columns.items()
    }


def test_identity_and_rename():
    result = query_lineage("select order_id, customer_id as buyer from raw.orders", SCHEMA)
    assert edges(result) == {
        "order_id": {"raw.orders.order_id": "identity"},
        "buyer": {"raw.orders.customer_id": "rename"},
    }
    assert result.columns["buyer"].kind == "rename"


def test_cast():
    result = query_lineage(
        "select cast(amount as decimal(10, 2)) as amount from raw.orders", SCHEMA
    )
    assert edges(result) == {"amount": {"raw.orders.amount": "cast"}}


def test_cte_chain_keeps_the_strongest_step():
    sql = """
        with source as (select * from raw.orders),
        renamed as (select order_id as id, cast(amount as double) as amount_num from source),
        final as (select id, amount_num * 2 as doubled from renamed)
        select * from final
    """
    result = query_lineage(sql, SCHEMA)
    assert edges(result) == {
        "id": {"raw.orders.order_id": "rename"},
        "doubled": {"raw.orders.amount": "expression"},
    }
    # the SQL of every non-trivial step, innermost first
    assert result.columns["doubled"].sql == "CAST(amount AS DOUBLE) -> amount_num * 2"


def test_select_star_expands_from_the_schema():
    result = query_lineage("with s as (select * from raw.customers) select * from s", SCHEMA)
    assert list(result.columns) == ["customer_id", "email", "country"]
    assert edges(result)["email"] == {"raw.customers.email": "identity"}
    assert not result.unresolved_star


def test_select_star_of_an_unknown_relation_is_reported_not_guessed():
    result = query_lineage("select * from raw.unknown_table", SCHEMA)
    assert result.columns == {}
    assert result.unresolved_star


def test_join_with_aliases_and_join_keys_as_indirect():
    sql = """
        select o.order_id, c.email as customer_email
        from raw.orders as o
        left join raw.customers as c on o.customer_id = c.customer_id
    """
    result = query_lineage(sql, SCHEMA)
    assert edges(result) == {
        "order_id": {"raw.orders.order_id": "identity"},
        "customer_email": {"raw.customers.email": "rename"},
    }
    assert {str(r): k for r, k in result.indirect.items()} == {
        "raw.orders.customer_id": "join",
        "raw.customers.customer_id": "join",
    }


def test_case_expression():
    sql = """
        select order_id,
               case when status = 'D' then null else amount end as live_amount
        from raw.orders
    """
    result = query_lineage(sql, SCHEMA)
    assert edges(result)["live_amount"] == {
        "raw.orders.status": "expression",
        "raw.orders.amount": "expression",
    }


def test_aggregate_and_group_by():
    sql = """
        select customer_id, count(*) as orders, sum(cast(amount as double)) as total
        from raw.orders group by customer_id
    """
    result = query_lineage(sql, SCHEMA)
    assert edges(result) == {
        "customer_id": {"raw.orders.customer_id": "identity"},
        # count(*) reads no column: the rows of raw.orders (a table-level edge)
        "orders": {"raw.orders.*": "aggregate"},
        "total": {"raw.orders.amount": "aggregate"},
    }
    assert result.columns["orders"].kind == "aggregate"
    assert {str(r): k for r, k in result.indirect.items()} == {"raw.orders.customer_id": "group_by"}


def test_table_level_dependencies_through_ctes_joins_and_windows():
    sql = """
        with recent as (select * from raw.orders where amount > 0),
        both_sides as (
            select r.order_id from recent as r join raw.customers as c
            on r.customer_id = c.customer_id
        )
        select count(*) as n, row_number() over (order by 1) as rn, 1 as one
        from both_sides
    """
    result = query_lineage(sql, SCHEMA)
    expected = {"raw.orders.*": "aggregate", "raw.customers.*": "aggregate"}
    assert edges(result)["n"] == expected
    assert edges(result)["rn"] == {"raw.orders.*": "window", "raw.customers.*": "window"}
    assert edges(result)["one"] == {}  # a constant reads nothing


def test_window_function():
    sql = """
        select order_id,
               row_number() over (partition by customer_id order by ordered_at desc) as rn,
               sum(cast(amount as double)) over (partition by customer_id) as customer_total
        from raw.orders
    """
    result = query_lineage(sql, SCHEMA)
    assert edges(result)["rn"] == {
        "raw.orders.customer_id": "window",
        "raw.orders.ordered_at": "window",
    }
    # an aggregate inside OVER is a window, not a grouping
    assert result.columns["customer_total"].kind == "window"


def test_union_matches_columns_by_position():
    sql = """
        select order_id as id, status as label from raw.orders
        union all
        select customer_id, email from raw.customers
    """
    result = query_lineage(sql, SCHEMA)
    assert edges(result) == {
        "id": {"raw.orders.order_id": "rename", "raw.customers.customer_id": "rename"},
        "label": {"raw.orders.status": "rename", "raw.customers.email": "rename"},
    }


def test_union_inside_a_cte():
    sql = """
        with files as (
            select customer_id from raw.orders
            union
            select customer_id from raw.customers
        )
        select count(distinct customer_id) as customers from files
    """
    result = query_lineage(sql, SCHEMA)
    assert edges(result) == {
        "customers": {
            "raw.orders.customer_id": "aggregate",
            "raw.customers.customer_id": "aggregate",
        }
    }


def test_struct_field_access_keeps_the_field_path():
    sql = """
        with source as (select * from raw.rides)
        select source.request_id,
               customer.first_name as customer_first_name,
               customer.address.city as city
        from source
    """
    result = query_lineage(sql, SCHEMA)
    assert edges(result) == {
        "request_id": {"raw.rides.request_id": "identity"},
        "customer_first_name": {"raw.rides.customer.first_name": "field"},
        "city": {"raw.rides.customer.address.city": "field"},
    }


def test_explode_in_the_select_list():
    result = query_lineage("select order_id, explode(items) as item from raw.orders", SCHEMA)
    assert edges(result)["item"] == {"raw.orders.items": "explode"}


def test_lateral_view_explode():
    sql = """
        select o.order_id, i.item
        from raw.orders as o
        lateral view outer explode(o.items) i as item
    """
    result = query_lineage(sql, SCHEMA)
    assert edges(result) == {
        "order_id": {"raw.orders.order_id": "identity"},
        "item": {"raw.orders.items": "explode"},
    }


def test_lateral_view_posexplode_two_columns():
    sql = "select order_id, pos, item from raw.orders lateral view posexplode(items) e as pos, item"
    result = query_lineage(sql, SCHEMA)
    assert edges(result)["pos"] == {"raw.orders.items": "explode"}
    assert edges(result)["item"] == {"raw.orders.items": "explode"}


def test_filter_only_columns_are_indirect_not_edges():
    sql = "select order_id from raw.orders where status <> 'D' and ordered_at > current_date()"
    result = query_lineage(sql, SCHEMA)
    assert edges(result) == {"order_id": {"raw.orders.order_id": "identity"}}
    assert {str(r): k for r, k in result.indirect.items()} == {
        "raw.orders.status": "filter",
        "raw.orders.ordered_at": "filter",
    }


def test_derived_table_and_scalar_subquery():
    sql = """
        select d.customer_id,
               (select max(email) from raw.customers c where c.customer_id = d.customer_id)
                   as email
        from (select customer_id from raw.orders) as d
    """
    result = query_lineage(sql, SCHEMA)
    assert edges(result) == {
        "customer_id": {"raw.orders.customer_id": "identity"},
        "email": {"raw.customers.email": "aggregate"},
    }


def test_constant_has_no_source():
    result = query_lineage("select 'full' as load_kind, order_id from raw.orders", SCHEMA)
    assert edges(result)["load_kind"] == {}
    assert result.columns["load_kind"].kind == "expression"


def test_dbt_ephemeral_cte_is_kept_as_a_relation():
    sql = """
        with __dbt__cte__int_state as (
            select customer_id, email from raw.customers where country = 'NL'
        )
        select * from __dbt__cte__int_state where customer_id > 0
    """
    result = query_lineage(sql, SCHEMA)
    assert edges(result)["email"] == {"__dbt__cte__int_state.email": "identity"}
    # the ephemeral model's own filter is its own; this query filters on its output
    assert {str(r): k for r, k in result.indirect.items()} == {
        "__dbt__cte__int_state.customer_id": "filter"
    }


def test_three_part_names_and_backticks_name_the_same_relation():
    result = query_lineage("select `email` from lake.raw.`customers`", SCHEMA)
    assert edges(result) == {"email": {"raw.customers.email": "identity"}}


def test_ambiguous_column_is_unknown_not_invented():
    # `note` is in neither table's known columns: which table it belongs to is unknowable.
    sql = "select o.order_id, note from raw.orders o join raw.customers c on true"
    result = query_lineage(sql, SCHEMA)
    assert result.columns["note"].kind == "unknown"
    assert result.columns["note"].refs == {}
    assert result.columns["note"].unknown == ["note"]


def test_unparseable_sql_raises_a_clear_error():
    with pytest.raises(LineageParseError, match="cannot parse"):
        query_lineage("select from where (", SCHEMA)
