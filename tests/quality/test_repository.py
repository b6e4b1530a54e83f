"""The metrics repository on Iceberg keeps history, and anomaly checks read it."""

from __future__ import annotations

import pytest

from floe.quality.verification import verify

pytestmark = pytest.mark.integration


def test_repository_keeps_history_and_anomalies_use_it(spark, lakehouse):
    spark.sql("create table staging.orders (id bigint, amount double) using iceberg")
    spark.sql("insert into staging.orders select id, id * 1.5 from range(10)")
    checks = [
        "size > 0",
        {"anomaly": {"metric": "size", "strategy": "relative_rate_of_change", "max_increase": 2}},
        {"anomaly": {"metric": "mean(amount)", "strategy": "absolute_change", "max_increase": 100}},
    ]
    first = verify(spark, "staging.orders", checks)
    assert [r.status for r in first.results] == ["pass", "skip", "skip"]
    spark.sql("insert into staging.orders select id, id * 1.5 from range(10, 40)")
    second = verify(spark, "staging.orders", checks)
    assert [r.status for r in second.results] == ["pass", "fail", "pass"]
    assert "previous 10, ratio 4 > max_increase 2" in second.results[1].message
    assert second.errors != []  # the anomaly is an error-severity check

    metrics = spark.sql(
        "select run_id, snapshot_id, analyzer, columns, value from dq.metrics "
        "where analyzer = 'size' order by computed_at"
    ).collect()
    assert [m.value for m in metrics] == [10.0, 40.0]
    assert [m.run_id for m in metrics] == [first.run_id, second.run_id]
    snapshots = [
        r[0] for r in spark.sql("select snapshot_id from staging.orders.snapshots").collect()
    ]
    assert [m.snapshot_id for m in metrics] == snapshots
    stored = spark.sql(
        "select status, expected, actual from dq.check_results where run_id = :r order by check",
        args={"r": second.run_id},
    ).collect()
    assert sorted(r.status for r in stored) == ["fail", "pass", "pass"]
