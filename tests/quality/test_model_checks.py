"""`dbt build` runs a model's floe_checks: error fails the build, warn is reported, history kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from floe.dbt_runner import run_dbt

pytestmark = pytest.mark.integration

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "dq_project"


def test_checks_run_in_dbt_build(spark, lakehouse, dbt_target_path):
    def build(missing: int):
        return run_dbt(
            ["build"],
            vars={"dq_missing_emails": missing},
            project=FIXTURE,
            target_path=dbt_target_path / "dqfixture",
            quiet=True,
        )

    # 1 of 10 e-mails missing: the error check (>= 0.8) holds, the warn check (>= 0.95)
    # fails -> reported, build passes, the child is built.
    run = build(1)
    assert run.success, run.failures or run.exception
    results = spark.sql(
        "select check, severity, status, actual from dq.check_results order by check"
    ).collect()
    by_check = {(r.check, r.severity): (r.status, r.actual) for r in results}
    assert by_check[("completeness(email) >= 0.95", "warn")] == ("fail", 0.9)
    assert by_check[("completeness(email) >= 0.8", "error")] == ("pass", 0.9)
    assert by_check[("anomaly relative_rate_of_change on size", "error")] == ("skip", 10.0)
    assert spark.table("marts.dq_downstream").count() == 1
    metrics = spark.sql(
        "select model, table_name, snapshot_id, analyzer, columns, value from dq.metrics"
    ).collect()
    assert {(m.model, m.table_name) for m in metrics} == {("dq_people", "marts.dq_people")}
    current = spark.sql("select snapshot_id from marts.dq_people.refs where name = 'main'")
    assert {m.snapshot_id for m in metrics} == {current.first()[0]}

    # 3 of 10 missing: completeness 0.7 < 0.8 -> the build fails naming table, check,
    # expected and actual; the child is skipped.
    run = build(3)
    assert not run.success
    message = "\n".join(run.failures)
    assert "marts.dq_people" in message
    assert "completeness(email) >= 0.8" in message
    assert "expected >= 0.8, actual 0.7" in message
    assert "test.floe_dq_fixture.floe_checks_dq_people" in message
    statuses = {str(r.node.name): str(r.status) for r in run.result.results}
    assert statuses["dq_downstream"] == "skipped"

    # The second run saw the first one's size as history (ratio 1.0 -> pass).
    anomaly = spark.sql(
        "select status from dq.check_results where check like 'anomaly%' order by checked_at"
    ).collect()
    assert [r.status for r in anomaly] == ["skip", "pass"]
