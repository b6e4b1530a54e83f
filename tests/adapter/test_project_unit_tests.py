"""The floe project's own dbt unit tests (`unit_tests:` in models/), run on the adapter.

dbt-spark runs unit tests as temporary views over CTE fixtures; every input, the scd2
history dim_product_priority included, is a fixture, so no table must exist first.
"""

from __future__ import annotations

EXPECTED = {
    "int_customers__loads__full_and_change_loads",
    "int_customers__loads__late_file_changes_the_fingerprint",
    "int_customers__loads__two_kinds_in_one_load",
    "fct_orders__priority_valid_on_the_order_day",
}


def test_project_unit_tests_pass(lakehouse, dbt):
    run = dbt(["test", "--select", "test_type:unit"])
    results = {r.node.name: str(r.status) for r in run.result.results}
    assert set(results) >= EXPECTED, f"unit tests not found: {EXPECTED - set(results)}"
    assert {name: status for name, status in results.items() if status != "pass"} == {}
