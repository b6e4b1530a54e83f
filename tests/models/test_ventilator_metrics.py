"""The project's microbatch mart: marts.ventilator_metrics, batched by month of ingest
time (docs/decisions/0050-ventilator-metrics-microbatch-on-ingest-time.md).

On the project itself: a fresh build is one batch per month since `begin`; a second
build with nothing new re-checks this month and the last and commits no snapshot; a
newly landed ventilator file is applied by the next incremental build in one commit;
every step reconciles with raw.ventilator row for row.
"""

from __future__ import annotations

import datetime as dt

import pytest

from floe.generator import GenerateOptions, generate
from tests.helpers import current_snapshot

pytestmark = pytest.mark.integration

MART = "marts.ventilator_metrics"
RAW = "raw.ventilator"
SELECT = ["-s", "+ventilator_metrics", "--exclude", "resource_type:test"]
BEGIN = dt.date(2026, 11, 1)  # the model's `begin`
SCALE = 40


def _months_since_begin() -> int:
    now = dt.datetime.now(dt.UTC)
    return (now.year - BEGIN.year) * 12 + now.month - BEGIN.month + 1


def _batches(run) -> int:
    """Batches the mart's node ran in one dbt invocation (all of them succeeded)."""
    (node,) = [r for r in run.result.results if r.node.name == "ventilator_metrics"]
    assert node.batch_results is not None, "ventilator_metrics did not run as microbatch"
    assert not node.batch_results.failed, node.batch_results.failed
    return len(node.batch_results.successful)


def _commits(spark) -> int:
    return spark.sql(f"select count(*) from {MART}.snapshots").first()[0]


def _reconciles_with_raw(spark) -> int:
    """The mart holds exactly raw's rows (as typed by staging), no more, no fewer."""
    typed = spark.table("staging.stg_streams__ventilator")
    mart = spark.table(MART).select(*typed.columns)
    assert mart.exceptAll(typed).count() == 0, "rows in the mart that raw does not hold"
    assert typed.exceptAll(mart).count() == 0, "raw rows missing from the mart"
    raw_rows = spark.table(RAW).count()
    assert spark.table(MART).count() == raw_rows
    return raw_rows


def test_second_build_commits_nothing_and_a_new_file_is_applied(spark, lakehouse, dbt):
    day_one = GenerateOptions(landing=lakehouse.landing, days=1, scale=SCALE)
    generate(day_one, ["streams.ventilator"])
    months = _months_since_begin()
    fresh = dbt(["build", *SELECT])
    assert _batches(fresh) in (months, _months_since_begin())  # one batch per month
    first_rows = _reconciles_with_raw(spark)
    assert first_rows > 0
    # Demo events are dated 2022; the batches are by ingest time, so none is cut.
    assert spark.sql(f"select max(eventtime) < timestamp'2023-01-01' from {MART}").first()[0]
    first, commits = current_snapshot(spark, MART), _commits(spark)

    again = dbt(["build", "-s", "ventilator_metrics"])
    assert _batches(again) == 2, "lookback 1: this month and the last"
    assert current_snapshot(spark, MART) == first, "nothing new: no snapshot committed"
    assert _commits(spark) == commits

    # A second demo day lands new ventilator files (day one's files are unchanged).
    generate(
        GenerateOptions(landing=lakehouse.landing, days=2, scale=SCALE), ["streams.ventilator"]
    )
    dbt(["build", *SELECT])
    rows = _reconciles_with_raw(spark)
    assert rows > first_rows, "the new file's rows reached raw and the mart"
    assert _commits(spark) == commits + 1, "one commit: only the current month's batch changed"
    days = spark.sql(f"select count(distinct to_date(eventtime)) from {MART}").first()[0]
    assert days == 2

    # The data test passes on the reconciled mart, and names the month when the mart is
    # short (a gap between builds longer than the lookback would leave raw rows out).
    check = ["test", "-s", "assert_ventilator_metrics_has_every_raw_row"]
    dbt(check)
    spark.sql(f"delete from {MART} where ventilatorid % 2 = 0")
    short = dbt(check, expect_success=False)
    assert not short.success
    (failed,) = [r for r in short.result.results if r.status == "fail"]
    assert failed.failures == 1  # one ingest month short
