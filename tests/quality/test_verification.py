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


def test_unchanged_inputs_reuse_the_last_runs_metrics_tables_and_views(
    spark, lakehouse, monkeypatch
):
    import floe.quality.verification as verification
    from floe.quality.repository import current_snapshot_id

    spark.sql("create table marts.dq_reuse (id bigint, email string) using iceberg")
    spark.sql("insert into marts.dq_reuse values (1, 'a@x'), (2, null), (3, 'c@x')")
    spark.sql(
        "create or replace view marts.dq_reuse_v as select * from marts.dq_reuse where id > 1"
    )
    checks = ["size > 0", {"check": "completeness(email) >= 0.9", "severity": "warn"}]
    computed = []
    compute = verification.compute_metrics
    monkeypatch.setattr(
        verification,
        "compute_metrics",
        lambda *a, **k: computed.append(1) or compute(*a, **k),
    )

    table_snapshot = spark.sql("select snapshot_id from marts.dq_reuse.refs").first()[0]
    assert current_snapshot_id(spark, "marts.dq_reuse") == table_snapshot
    view_fp = current_snapshot_id(spark, "marts.dq_reuse_v")
    assert view_fp is not None and view_fp < 0
    assert current_snapshot_id(spark, "marts.dq_reuse_v") == view_fp  # stable

    for name in ("marts.dq_reuse", "marts.dq_reuse_v"):
        first = verify(spark, name, checks, model=name)
        second = verify(spark, name, checks, model=name)  # same inputs: read back
        assert [m.value for m in second.metrics] == [m.value for m in first.metrics]
        assert [r.status for r in second.results] == [r.status for r in first.results]
    assert len(computed) == 2
    view_metrics = {m.name: m.value for m in second.metrics}
    assert view_metrics == {"size": 2.0, "completeness": 0.5}

    # the view's definition changes: another fingerprint, computed again
    spark.sql("create or replace view marts.dq_reuse_v as select * from marts.dq_reuse")
    assert current_snapshot_id(spark, "marts.dq_reuse_v") not in (None, view_fp)
    assert {
        m.name: m.value
        for m in verify(spark, "marts.dq_reuse_v", checks, model="marts.dq_reuse_v").metrics
    } == {
        "size": 3.0,
        "completeness": 2 / 3,
    }
    assert len(computed) == 3
    # the table under it changes: computed again, for the table and the view
    spark.sql("insert into marts.dq_reuse values (4, 'd@x')")
    verify(spark, "marts.dq_reuse", checks, model="marts.dq_reuse")
    verify(spark, "marts.dq_reuse_v", checks, model="marts.dq_reuse_v")
    assert len(computed) == 5
    # a view whose rows depend on the moment it is read has no fingerprint
    spark.sql(
        "create or replace view marts.dq_reuse_now as "
        "select * from marts.dq_reuse where id < unix_timestamp(current_timestamp())"
    )
    assert current_snapshot_id(spark, "marts.dq_reuse_now") is None
