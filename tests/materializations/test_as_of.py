"""as_of(): point-in-time lookup of a dimension version, compiled by dbt and run on Spark."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.integration

DAY_DIM = """
    select * from values
        (1, 'low',  date'2022-07-01', date'2022-07-04'),
        (1, 'high', date'2022-07-05', date'9999-12-31'),
        (2, 'mid',  date'2022-07-01', date'2022-07-01')
    as d(item, priority, valid_from, valid_to)
"""
TS_DIM = """
    select * from values
        (1, 'low',  timestamp'2022-07-01 00:00:00', timestamp'2022-07-05 12:00:00'),
        (1, 'high', timestamp'2022-07-05 12:00:00', cast(null as timestamp))
    as d(item, priority, dbt_valid_from, dbt_valid_to)
"""
EVENTS = """
    select * from values
        (10, 1, timestamp'2022-06-30 23:59:59'),
        (11, 1, timestamp'2022-07-04 23:59:59'),
        (12, 1, timestamp'2022-07-05 00:00:00'),
        (13, 1, timestamp'2022-07-05 12:00:00'),
        (14, 2, timestamp'2022-07-01 18:00:00'),
        (15, 2, timestamp'2022-07-02 00:00:00')
    as e(event_id, item, event_ts)
"""


def _lookup(dbt, dim_sql: str, condition: str) -> dict[int, str | None]:
    sql = (
        f"with d as ({dim_sql}), e as ({EVENTS}) "
        f"select e.event_id, d.priority from e left join d on e.item = d.item and {condition} "
        "order by e.event_id"
    )
    run = dbt(["show", "--inline", sql, "--limit", "100"])
    table = run.result.results[0].agate_table
    return {int(r[0]): r[1] for r in table.rows}


def test_as_of_day_grain_inclusive_dates(spark, dbt):
    got = _lookup(dbt, DAY_DIM, "{{ as_of('e.event_ts', 'd') }}")
    assert got == {10: None, 11: "low", 12: "high", 13: "high", 14: "mid", 15: None}


def test_as_of_timestamp_grain_half_open_null_current(spark, dbt):
    cond = "{{ as_of('e.event_ts', 'd', 'dbt_valid_from', 'dbt_valid_to', grain='timestamp') }}"
    got = _lookup(dbt, TS_DIM, cond)
    assert got == {10: None, 11: "low", 12: "low", 13: "high", 14: None, 15: None}


def test_as_of_rejects_unknown_grain(spark, dbt):
    sql = "select 1 as x where {{ as_of('now()', 'd', grain='hour') }}"
    run = dbt(["show", "--inline", sql], expect_success=False)
    assert not run.success
