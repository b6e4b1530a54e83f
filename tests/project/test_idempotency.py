"""The whole project is idempotent: a build with nothing new commits to no table, and a
build after one feed lands a new day commits only to what depends on that feed.

Every table's current snapshot id is read from the catalog with pyiceberg (an
independent reader of the catalog Spark writes); views have no snapshots.
"""

from __future__ import annotations

import json

import pytest

from floe.generator import GenerateOptions, generate
from floe.runtime import open_catalog

pytestmark = pytest.mark.integration

DAYS, SCALE = 2, 8
# Written by every build that ingests or checks anything: the ingestion ledger and
# quarantine, data-quality results and the audit tables.
SIDE_SCHEMAS = {"dq", "audit"}
SIDE_TABLES = {"raw.landed_files", "raw.quarantine"}


def _current_snapshots(settings) -> dict[str, int | None]:
    catalog = open_catalog(settings)
    out: dict[str, int | None] = {}
    for namespace in catalog.list_namespaces():
        for identifier in catalog.list_tables(namespace):
            table = catalog.load_table(identifier)
            out[".".join(identifier)] = table.metadata.current_snapshot_id
    return out


def _descendant_tables(manifest: dict, source_name: str) -> set[str]:
    """Relations (schema.alias) of every node downstream of the sources ``source_name``."""
    start = [uid for uid, node in manifest["sources"].items() if node["source_name"] == source_name]
    assert start, f"no source named {source_name!r} in the manifest"
    seen: set[str] = set()
    stack = list(start)
    while stack:
        for child in manifest["child_map"].get(stack.pop(), []):
            if child not in seen:
                seen.add(child)
                stack.append(child)
    nodes = manifest["nodes"]
    return {
        f"{nodes[uid]['schema']}.{nodes[uid]['alias']}"
        for uid in seen
        if uid in nodes and nodes[uid]["resource_type"] in ("model", "snapshot", "seed")
    }


def test_whole_project_rebuild_commits_nothing_then_only_what_depends_on_new_data(
    spark, lakehouse, dbt, dbt_target_path
):
    generate(GenerateOptions(landing=lakehouse.landing, days=DAYS, scale=SCALE))
    dbt(["build"])
    first = _current_snapshots(lakehouse)
    assert len(first) > 20, sorted(first)
    assert first["marts.dim_customer"] is not None

    dbt(["build"])
    second = _current_snapshots(lakehouse)
    changed = {t for t in first if second.get(t) != first[t]}
    assert set(second) == set(first), "a build with nothing new created or dropped tables"
    assert changed == set(), f"a build with nothing new committed to {sorted(changed)}"

    # One more day of the customer feeds only.
    generate(GenerateOptions(landing=lakehouse.landing, days=DAYS + 1, scale=SCALE), ["customers"])
    dbt(["build"])
    third = _current_snapshots(lakehouse)
    changed = {t for t in second if third.get(t) != second[t]}
    manifest = json.loads((dbt_target_path / "manifest.json").read_text())
    downstream = _descendant_tables(manifest, "customers")
    allowed = downstream | SIDE_TABLES | {t for t in third if t.split(".")[0] in SIDE_SCHEMAS}
    assert changed - allowed == set(), (
        f"tables that do not depend on the customer feeds committed: {sorted(changed - allowed)}"
    )
    assert {"raw.customer_master", "raw.customer_address"} <= changed
    assert "marts.dim_customer" in changed
    # The streams and DMS tables saw nothing new.
    untouched = {"raw.sporting_event", "raw.mlb_data", "raw.ventilator", "raw.weather"}
    assert untouched <= set(second) and not (untouched & changed)
