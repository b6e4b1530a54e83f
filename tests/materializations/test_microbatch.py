"""incremental_strategy='microbatch' on Iceberg: each batch replaces exactly its window.

The fixture (tests/materializations/fixtures/microbatch_project) reads raw.mb_events,
which the tests write; events sit in the last few days (dbt computes batches up to
now; `lookback` counts back from today's batch).
"""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path

import pytest

from floe.dbt_runner import run_dbt
from tests.helpers import current_snapshot

pytestmark = pytest.mark.integration

FIXTURE = Path(__file__).parent / "fixtures" / "microbatch_project"
DAY = dt.timedelta(days=1)
TABLE = "marts.mb_daily"


@pytest.fixture
def today() -> dt.datetime:
    """Today's UTC midnight, taken when the test starts, not when the module is imported:
    dbt batches up to its own now, so a suite running across midnight would otherwise
    give dbt one more day than the test's events. A test starting in the last two
    minutes of a UTC day waits for the next day, so no test spans midnight."""
    now = dt.datetime.now(dt.UTC)
    left = (now.replace(hour=0, minute=0, second=0, microsecond=0) + DAY - now).total_seconds()
    if left < 120:
        time.sleep(left + 1)
    return dt.datetime.now(dt.UTC).replace(tzinfo=None, hour=0, minute=0, second=0, microsecond=0)


def _events(spark, rows: list[tuple[int, dt.datetime, int]]) -> None:
    frame = spark.createDataFrame(rows, "id int, ts timestamp, amount int")
    frame.writeTo("raw.mb_events").using("iceberg").createOrReplace()


def _base(today: dt.datetime) -> list[tuple[int, dt.datetime, int]]:
    return [
        (i, today - d * DAY + dt.timedelta(hours=h), i * 10 + d)
        for d in (3, 2, 1, 0)
        for i, h in ((d * 10 + 1, 1), (d * 10 + 2, 5), (d * 10 + 3, 23))
    ]


@pytest.fixture
def mb(lakehouse, dbt_target_path, today):
    begin = (today - 3 * DAY).date().isoformat()

    def run(*args: str, ok: bool = True):
        result = run_dbt(
            list(args),
            vars={"mb_begin": begin},
            project=FIXTURE,
            target_path=dbt_target_path / "mbfixture",
            quiet=True,
        )
        assert result.success == ok, result.failures or result.exception or "should fail"
        return result

    return run


def _expected(rows, today: dt.datetime) -> set[tuple]:
    return {(i, ts, amount * 10) for i, ts, amount in rows if ts < today + DAY}


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


def test_late_event_inside_lookback_is_applied_and_rerun_commits_nothing(spark, mb, today):
    rows = _base(today)
    _events(spark, rows)
    mb("run", "-s", "mb_daily")
    assert _table(spark) == _expected(rows, today)
    first = current_snapshot(spark, TABLE)
    mb("run", "-s", "mb_daily")  # lookback batches again, nothing new
    assert current_snapshot(spark, TABLE) == first, "unchanged batches commit nothing"

    # yesterday's event arrives late (lookback=1: yesterday's batch is re-run)
    rows.append((99, today - DAY + dt.timedelta(hours=12), 7))
    _events(spark, rows)
    before, commits = _window_sums(spark), _commits(spark)
    mb("run", "-s", "mb_daily")
    assert _table(spark) == _expected(rows, today)
    after = _window_sums(spark)
    assert {d for d in after if after[d] != before.get(d)} == {(today - DAY).date()}
    assert _commits(spark) == commits + 1, "one commit for the one changed batch"


def test_failed_batch_then_retry_equals_a_one_shot_build(spark, mb, today):
    rows = _base(today)
    poisoned = [(i, ts, -1 if i == 21 else a) for i, ts, a in rows]  # a day-2 event
    _events(spark, poisoned)
    run = mb("run", "-s", "mb_daily", ok=False)
    assert "poisoned event 21" in " ".join(run.failures) or not run.success
    days = {ts.date() for _, ts, _ in _table(spark)}
    assert (today - 2 * DAY).date() not in days and today.date() in days, days

    _events(spark, rows)  # the bad event is corrected upstream
    mb("retry")
    retried = _table(spark)
    assert retried == _expected(rows, today)

    mb("run", "-s", "mb_daily", "--full-refresh")  # the one-shot build
    assert _table(spark) == retried


def test_backfill_of_one_window_changes_only_that_window(spark, mb, today):
    rows = _base(today)
    _events(spark, rows)
    mb("run", "-s", "mb_daily")
    before, commits = _window_sums(spark), _commits(spark)

    # two days change upstream; only one is backfilled
    changed = [
        (
            i,
            ts,
            a + 1000 if ts.date() in {(today - 3 * DAY).date(), (today - 2 * DAY).date()} else a,
        )
        for i, ts, a in rows
    ]
    _events(spark, changed)
    start = (today - 3 * DAY).strftime("%Y-%m-%d")
    end = (today - 2 * DAY).strftime("%Y-%m-%d")
    mb("run", "-s", "mb_daily", "--event-time-start", start, "--event-time-end", end)
    after = _window_sums(spark)
    assert {d for d in after if after[d] != before[d]} == {(today - 3 * DAY).date()}
    assert _commits(spark) == commits + 1, "the backfilled batch is one commit"
    backfilled = {(i, ts, a * 10) for i, ts, a in changed if ts.date() == (today - 3 * DAY).date()}
    assert {r for r in _table(spark) if r[1].date() == (today - 3 * DAY).date()} == backfilled


def test_hourly_batches_without_partition_by(spark, mb, today):
    rows = _base(today)
    _events(spark, rows)
    start = (today - DAY).strftime("%Y-%m-%d %H:%M:%S")
    end = (today - DAY + dt.timedelta(hours=6)).strftime("%Y-%m-%d %H:%M:%S")
    mb("run", "-s", "mb_hourly", "--event-time-start", start, "--event-time-end", end)
    got = {(r.ts, r.events) for r in spark.table("marts.mb_hourly").collect()}
    assert got == {
        (today - DAY + dt.timedelta(hours=1), 1),
        (today - DAY + dt.timedelta(hours=5), 1),
    }
