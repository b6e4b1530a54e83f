"""Hand-written dbt manifests for the lineage tests (the fields floe.lineage reads)."""

from __future__ import annotations

from typing import Any


def source(name: str, columns: list[str], floe: dict | None = None) -> dict[str, Any]:
    return {
        "resource_type": "source",
        "source_name": "shop",
        "name": name,
        "relation_name": f"landing.{name}",
        "schema": "landing",
        "source_meta": {"floe": floe} if floe else {},
        "meta": {},
        "config": {},
        "description": "",
        "columns": {c: {"name": c, "data_type": "string", "description": c} for c in columns},
    }


def model(
    name: str,
    sql: str | None,
    parents: list[str],
    *,
    layer: str = "staging",
    language: str = "sql",
    config: dict | None = None,
    columns: dict | None = None,
    resource_type: str = "model",
) -> dict[str, Any]:
    materialized = (config or {}).get("materialized", "view")
    return {
        "resource_type": resource_type,
        "name": name,
        "fqn": ["shop", layer, name],
        "language": language,
        "relation_name": None if materialized == "ephemeral" else f"{layer}.{name}",
        "compiled_code": sql,
        "raw_code": sql,
        "depends_on": {"nodes": parents},
        "config": {"materialized": materialized, **(config or {})},
        "columns": columns or {},
    }


def manifest(*entries: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    nodes = {uid: n for uid, n in entries if n["resource_type"] != "source"}
    sources = {uid: n for uid, n in entries if n["resource_type"] == "source"}
    return {"nodes": nodes, "sources": sources}


FEED = {"kind": "csv_loads", "key": ["customer_id"], "op_column": "status"}


def feed_project() -> dict[str, Any]:
    return manifest(
        ("source.shop.shop.customers", source("customers", ["customer_id", "email"], FEED)),
        (
            "model.shop.raw_customers",
            model(
                "raw_customers",
                None,
                ["source.shop.shop.customers"],
                layer="raw",
                language="python",
                config={"materialized": "incremental", "schema": "raw"},
            ),
        ),
        (
            "model.shop.stg_customers",
            model(
                "stg_customers",
                "with s as (select * from raw.raw_customers) "
                "select customer_id, lower(email) as email, _load_date as load_date, "
                "upper(status) as status from s",
                ["model.shop.raw_customers"],
            ),
        ),
    )
