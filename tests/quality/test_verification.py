"""Re-verifying unchanged data records nothing: a re-run of `dbt build` changes no table."""

from __future__ import annotations

import pytest

from floe.quality.verification import verify

pytestmark = pytest.mark.integration


def _count(spark, table: str) -> int:
    return spark.sql(f"select count(*) from {table}").collect()[0][0]


def test_same_snapshot_same_metrics_appends_once(spark, lakehouse):
    spark.sql("create table marts.dq_rerun (id bigint, email string) using iceberg")
    spark.sql("insert into marts.dq_rerun values (1, 'a@x'), (2, null)")
    checks = ["size > 0", {"check": "completeness(email) >= 0.4", "severity": "warn"}]

    first = verify(spark, "marts.dq_rerun", checks, model="dq_rerun")
    metrics_rows = _count(spark, "dq.metrics")
    snapshots = _count(spark, "dq.metrics.snapshots")
    second = verify(spark, "marts.dq_rerun", checks, model="dq_rerun")
    assert not second.errors and not first.errors
    assert _count(spark, "dq.metrics") == metrics_rows
    assert _count(spark, "dq.metrics.snapshots") == snapshots

    spark.sql("insert into marts.dq_rerun values (3, 'c@x')")  # new data: recorded again
    verify(spark, "marts.dq_rerun", checks, model="dq_rerun")
    assert _count(spark, "dq.metrics") == 2 * metrics_rows


def test_models_sharing_a_run_id_are_compared_one_by_one(spark, lakehouse):
    # One dbt invocation gives every model's checks the same run id.
    for name in ("dq_a", "dq_b"):
        spark.sql(f"create table marts.{name} (id bigint) using iceberg")
        spark.sql(f"insert into marts.{name} values (1), (2)")
    verify(spark, "marts.dq_a", ["size > 0"], model="dq_a", run_id="run1")
    verify(spark, "marts.dq_b", ["size > 0", "is_unique(id)"], model="dq_b", run_id="run1")
    rows = _count(spark, "dq.metrics")
    verify(spark, "marts.dq_a", ["size > 0"], model="dq_a", run_id="run2")
    verify(spark, "marts.dq_b", ["size > 0", "is_unique(id)"], model="dq_b", run_id="run2")
    assert _count(spark, "dq.metrics") == rows
