"""Constraint suggestion: suggested checks parse and pass on the profiled table."""

from __future__ import annotations

import pytest
import yaml
from click.testing import CliRunner

from floe.quality.cli import _checks_from_yaml, dq
from floe.quality.suggest import suggest_checks, suggestion_yaml
from floe.quality.verification import verify

pytestmark = pytest.mark.integration


def test_suggestions_parse_and_pass_on_the_profiled_table(spark, lakehouse):
    rows = [
        (
            i,
            ["new", "paid", "shipped"][i % 3],
            i * 2.5,
            None if i % 10 == 0 else f"u{i}@x.io",
            str(i),
        )
        for i in range(60)
    ]
    spark.createDataFrame(
        rows, "id long, status string, amount double, email string, code string"
    ).writeTo("marts.fct_orders").using("iceberg").create()
    result = CliRunner().invoke(dq, ["suggest", "fct_orders"])
    assert result.exit_code == 0, result.output
    doc = yaml.safe_load(result.output)
    checks = _checks_from_yaml(doc)
    texts = {c.get("check") for c in checks}
    assert {
        "size > 0",
        "is_complete(id)",
        "is_unique(id)",
        "is_contained_in(status, ['new', 'paid', 'shipped'])",
        "is_non_negative(amount)",
        "completeness(email) >= 0.9",
        "has_data_type(code, integral)",
    } <= texts
    assert "is_unique(status)" not in texts
    outcome = verify(spark, "marts.fct_orders", checks, store=False)
    assert [r.message for r in outcome.results if r.status == "fail"] == []

    # Same from the Python API, and the YAML header is a comment.
    checks2, prof = suggest_checks(spark.table("marts.fct_orders"))
    assert prof.row_count == 60 and prof.columns["code"].data_type == "Integral"
    assert suggestion_yaml("marts.fct_orders", checks2, prof).startswith("# floe dq suggest")
