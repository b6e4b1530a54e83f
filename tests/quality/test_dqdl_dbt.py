"""`dbt build` runs a model's DQDL ruleset (inline or a .dqdl file beside it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from floe.dbt_runner import run_dbt

pytestmark = pytest.mark.integration

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "dqdl_project"


def test_dqdl_rulesets_run_in_dbt_build(spark, lakehouse, dbt_target_path):
    def build(bad: int):
        return run_dbt(
            ["build"],
            vars={"dqdl_bad_country": bad},
            project=FIXTURE,
            target_path=dbt_target_path / "dqdlfixture",
            quiet=True,
        )

    run = build(0)
    assert run.success, run.failures or run.exception
    results = spark.sql("select model, check, status from dq.check_results").collect()
    assert {(r.model, r.check) for r in results} >= {
        ("dqdl_countries", 'IsUnique "code"'),
        ("dqdl_people", 'ReferentialIntegrity "country" "countries.code" = 1.0'),
        ("dqdl_people", '(IsComplete "email") and (ColumnExists "country")'),
    }
    assert {r.status for r in results} == {"pass"}
    assert spark.table("marts.dqdl_downstream").count() == 1

    run = build(2)  # two people in 'XX': referential integrity 0.8
    assert not run.success
    message = "\n".join(run.failures)
    assert "marts.dqdl_people" in message
    assert 'ReferentialIntegrity "country" "countries.code" = 1.0' in message
    assert "actual 0.8" in message
    statuses = {str(r.node.name): str(r.status) for r in run.result.results}
    assert statuses["dqdl_downstream"] == "skipped"
