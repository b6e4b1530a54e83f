"""incremental_strategy='microbatch' on Iceberg: each batch replaces exactly its window.

The fixture (tests/materializations/fixtures/microbatch_project) reads raw.mb_events,
which the tests write; events sit in the last few days (dbt computes batches up to
now; `lookback` counts back from today's batch).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from floe.dbt_runner import run_dbt
from tests.helpers import current_snapshot

pytestmark = pytest.mark.integration

FIXTURE = Path(__file__).parent / "fixtures" / "microbatch_project"
TODAY = dt.datetime.now(dt.UTC).replace(tzinfo=None, hour=0, minute=0, second=0, microsecond=0)
DAY = dt.timedelta(days=1)
BEGIN = (TODAY - 3 * DAY).date().isoformat()
TABLE = "marts.mb_daily"


def _events(spark, rows: list[tuple[int, dt.datetime, int]]) -> None:
    frame = spark.createDataFrame(rows, "id int, ts timestamp, amount int")
    frame.writeTo("raw.mb_events").using("iceberg").createOrReplace()


def _base() -> list[tuple[int, dt.datetime, int]]:
    return [
        (i, TODAY - d * DAY + dt.timedelta(hours=h), i * 10 + d)
        for d in (3, 2, 1, 0)
        for i, h in ((d * 10 + 1, 1), (d * 10 + 2, 5), (d * 10 + 3, 23))
    ]


@pytest.fixture
def mb(lakehouse, dbt_target_path):
    def run(*args: str, ok: bool = True):
        result = run_dbt(
            list(args),
            vars={"mb_begin": BEGIN},
            project=FIXTURE,
            target_path=dbt_target_path / "mbfixture",
            quiet=True,
        )
        assert result.success == ok, result.failures or result.exception or "should fail"
        return result

    return run


def _expected(rows) -> set[tuple]:
    return {(i, ts, amount * 10) for i, ts, amount in rows if ts < TODAY + DAY}


def _table(spark) -> set[tuple]:
    return {(r.id, r.ts, r.amount_x10) for r in spark.table(TABLE).collect()}


def _window_sums(spark) -> dict:
    rows = spark.sql(
        f"select date(ts) as day, count(*) as n, sum(hash(id, ts, amount_x10)) as h "
        f"from {TABLE} group by date(ts)"
    ).collect()
    return {r.day: (r.n, r.h) for r in rows}


def _commits(spark) -> int:
    return spark.sql(f"select count(*) from {TABLE}.snapshots").first()[0]


def test_late_event_inside_lookback_is_applied_and_rerun_commits_nothing(spark, mb):
    rows = _base()
    _events(spark, rows)
    mb("run", "-s", "mb_daily")
    assert _table(spark) == _expected(rows)
    first = current_snapshot(spark, TABLE)
    mb("run", "-s", "mb_daily")  # lookback batches again, nothing new
    assert current_snapshot(spark, TABLE) == first, "unchanged batches commit nothing"

    # yesterday's event arrives late (lookback=1: yesterday's batch is re-run)
    rows.append((99, TODAY - DAY + dt.timedelta(hours=12), 7))
    _events(spark, rows)
    before, commits = _window_sums(spark), _commits(spark)
    mb("run", "-s", "mb_daily")
    assert _table(spark) == _expected(rows)
    after = _window_sums(spark)
    assert {d for d in after if after[d] != before.get(d)} == {(TODAY - DAY).date()}
    assert _commits(spark) == commits + 1, "one commit for the one changed batch"


def test_failed_batch_then_retry_equals_a_one_shot_build(spark, mb):
    rows = _base()
    poisoned = [(i, ts, -1 if i == 21 else a) for i, ts, a in rows]  # a day-2 event
    _events(spark, poisoned)
    run = mb("run", "-s", "mb_daily", ok=False)
    assert "poisoned event 21" in " ".join(run.failures) or not run.success
    days = {ts.date() for _, ts, _ in _table(spark)}
    assert (TODAY - 2 * DAY).date() not in days and TODAY.date() in days, days

    _events(spark, rows)  # the bad event is corrected upstream
    mb("retry")
    retried = _table(spark)
    assert retried == _expected(rows)

    mb("run", "-s", "mb_daily", "--full-refresh")  # the one-shot build
    assert _table(spark) == retried


def test_backfill_of_one_window_changes_only_that_window(spark, mb):
    rows = _base()
    _events(spark, rows)
    mb("run", "-s", "mb_daily")
    before, commits = _window_sums(spark), _commits(spark)

    # two days change upstream; only one is backfilled
    changed = [
        (
            i,
            ts,
            a + 1000 if ts.date() in {(TODAY - 3 * DAY).date(), (TODAY - 2 * DAY).date()} else a,
        )
        for i, ts, a in rows
    ]
    _events(spark, changed)
    start = (TODAY - 3 * DAY).strftime("%Y-%m-%d")
    end = (TODAY - 2 * DAY).strftime("%Y-%m-%d")
    mb("run", "-s", "mb_daily", "--event-time-start", start, "--event-time-end", end)
    after = _window_sums(spark)
    assert {d for d in after if after[d] != before[d]} == {(TODAY - 3 * DAY).date()}
    assert _commits(spark) == commits + 1, "the backfilled batch is one commit"
    backfilled = {(i, ts, a * 10) for i, ts, a in changed if ts.date() == (TODAY - 3 * DAY).date()}
    assert {r for r in _table(spark) if r[1].date() == (TODAY - 3 * DAY).date()} == backfilled


def test_hourly_batches_without_partition_by(spark, mb):
    rows = _base()
    _events(spark, rows)
    start = (TODAY - DAY).strftime("%Y-%m-%d %H:%M:%S")
    end = (TODAY - DAY + dt.timedelta(hours=6)).strftime("%Y-%m-%d %H:%M:%S")
    mb("run", "-s", "mb_hourly", "--event-time-start", start, "--event-time-end", end)
    got = {(r.ts, r.events) for r in spark.table("marts.mb_hourly").collect()}
    assert got == {
        (TODAY - DAY + dt.timedelta(hours=1), 1),
        (TODAY - DAY + dt.timedelta(hours=5), 1),
    }
