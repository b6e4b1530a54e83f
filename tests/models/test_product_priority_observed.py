"""The project's dbt snapshot of the reference extracts (snapshots/_reference__snapshots.yml):
day by day it records exactly the changes of the latest extract, and a re-run commits
nothing."""

from __future__ import annotations

import pytest

from floe.generator import GenerateOptions, generate
from floe.generator.demo import reference
from tests.helpers import current_snapshot

pytestmark = pytest.mark.integration

SNAPSHOT = "snapshots.product_priority_observed"
SELECT = ["-s", "+product_priority_observed", "--exclude", "resource_type:test"]


def test_reference_history_records_exactly_the_changes(spark, lakehouse, dbt):
    two_days = GenerateOptions(landing=lakehouse.landing, days=2, scale=10)
    generate(two_days, ["reference"])
    dbt(["build", *SELECT])
    history = reference.priority_history(two_days)
    latest = history[-1][1]
    rows = spark.table(SNAPSHOT).collect()
    assert {(r.item, r.priority) for r in rows} == set(latest.items())
    assert all(r.dbt_valid_to is None and r.dbt_is_deleted == "False" for r in rows)

    first = current_snapshot(spark, SNAPSHOT)
    dbt(["snapshot", "-s", "product_priority_observed"])
    assert current_snapshot(spark, SNAPSHOT) == first, "no new extract: nothing committed"

    three_days = GenerateOptions(landing=lakehouse.landing, days=3, scale=10)
    generate(three_days, ["reference"])
    dbt(["build", *SELECT])
    newest = reference.priority_history(three_days)[-1][1]
    changed = {item for item in newest if newest[item] != latest[item]}
    assert len(changed) == 1, changed
    rows = spark.table(SNAPSHOT).collect()
    current = {r.item: r.priority for r in rows if r.dbt_valid_to is None}
    assert current == newest
    closed = [r for r in rows if r.dbt_valid_to is not None]
    assert [(r.item, r.priority) for r in closed] == [
        (item, latest[item]) for item in sorted(changed)
    ], "only the changed item's old version is closed"
    assert len(rows) == len(newest) + 1
