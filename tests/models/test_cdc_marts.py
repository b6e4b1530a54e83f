"""The DMS and insurance feeds end to end: landing -> raw (Python) -> marts (cdc merge)."""

from __future__ import annotations

from pathlib import Path

import pytest

from floe.generator import GenerateOptions, generate
from floe.generator.demo import insurance, sports
from tests.helpers import feed

pytestmark = pytest.mark.integration

KEYS = {
    "sporting_event": ("id",),
    "mlb_data": ("mlb_id", "season"),
    "nfl_stadium_data": ("sport_location_id",),
}
MARTS = [f"marts.{t}" for t in KEYS] + ["marts.insurance_policies"]
SELECT = "raw_dms__sporting_event+ raw_dms__mlb_data+ raw_dms__nfl_stadium_data+ " + (
    "raw_insurance__policies+"
)
SCALE = 60


def _snapshots(spark, table: str) -> list[int]:
    return [r[0] for r in spark.sql(f"select snapshot_id from {table}.snapshots").collect()]


def _assert_marts_match_generator(spark, opts: GenerateOptions) -> None:
    for table in KEYS:
        rows = sports.expected_state(feed(table), opts)
        got = {
            tuple(r[k] for k in KEYS[table]): r.asDict()
            for r in spark.table(f"marts.{table}").collect()
        }
        assert set(got) == set(rows), table
        for key, expected in rows.items():
            assert {c: got[key].get(c) for c in expected} == expected, (table, key)
    policies = {r.policy_id: r for r in spark.table("marts.insurance_policies").collect()}
    expected_policies = insurance.expected_state(feed("policies"), opts)
    assert set(policies) == set(expected_policies)
    columns = [c.name for c in feed("policies").columns]
    for pid, policy in expected_policies.items():
        assert tuple(policies[pid][c] for c in columns) == tuple(
            getattr(policy, c) for c in columns
        ), pid


def test_feeds_merge_day_by_day_and_rerun_commits_nothing(spark, lakehouse, dbt):
    two_days = GenerateOptions(landing=lakehouse.landing, days=2, scale=SCALE)
    generate(two_days, ["dms", "insurance"])
    dbt(["run", "-s", SELECT])
    _assert_marts_match_generator(spark, two_days)
    # the expected result of upserts merged by key (docs/cdc.md)
    seed = {r.policy_id: r for r in spark.table("marts.insurance_policies").collect()}
    assert seed[100463].insured_value == 1_000_000
    assert 110001 in seed and str(seed[100462].expiry_date) == "2024-12-31"
    assert seed[100475].flood_coverage == "Y"
    assert "attendance" not in spark.table("marts.sporting_event").columns

    # Day 3's sporting_event file adds `attendance`: the column appears, no full refresh.
    three_days = GenerateOptions(landing=lakehouse.landing, days=3, scale=SCALE)
    generate(three_days, ["dms", "insurance"])
    before = {t: _snapshots(spark, t) for t in MARTS}
    dbt(["build", "-s", SELECT])
    _assert_marts_match_generator(spark, three_days)
    for table in MARTS:
        assert len(_snapshots(spark, table)) == len(before[table]) + 1, table
    events = spark.table("marts.sporting_event")
    assert "attendance" in events.columns
    assert events.where("attendance is null").count() > 0  # rows not changed since
    assert events.where("attendance is not null").count() > 0

    # declared in YAML: partitioning, write mode, sort order, maintenance policy
    props = dict(spark.sql("show tblproperties marts.mlb_data").collect())
    assert props["write.merge.mode"] == "merge-on-read"
    assert props["history.expire.min-snapshots-to-keep"] == "5"
    events_props = dict(spark.sql("show tblproperties marts.sporting_event").collect())
    assert events_props["write.merge.mode"] == "copy-on-write"
    assert events_props["floe.sort-by"] == "start_date"
    partitions = spark.sql("select partition from marts.sporting_event.partitions").collect()
    assert {p.partition.sport_type_name for p in partitions} <= {"baseball", "football"}

    settled = {t: _snapshots(spark, t) for t in MARTS}
    dbt(["run", "-s", SELECT])
    assert {t: _snapshots(spark, t) for t in MARTS} == settled, "a re-run commits nothing"


def test_corrupt_feed_fails_alone_and_full_refresh_purges(spark, lakehouse, dbt):
    generate(GenerateOptions(landing=lakehouse.landing, days=2, scale=SCALE), ["dms", "insurance"])
    broken = (
        lakehouse.landing / "dms" / "dms_sample" / "nfl_stadium_data" / "20220703-010000000.parquet"
    )
    broken.write_bytes(b"PAR1 this is not parquet")

    run = dbt(["run", "-s", SELECT], expect_success=False)
    assert not run.success
    failed = " ".join(run.failures)
    assert "raw_dms__nfl_stadium_data" in failed and "20220703-010000000.parquet" in failed
    for table in ("sporting_event", "mlb_data", "insurance_policies"):
        assert spark.table(f"marts.{table}").count() > 0, table
    assert not spark.catalog.tableExists("marts.nfl_stadium_data")

    # full refresh drops the Iceberg table with PURGE: the old data files are gone
    old_files = [
        Path(r[0].removeprefix("file:"))
        for r in spark.sql("select file_path from marts.sporting_event.files").collect()
    ]
    assert old_files and all(f.exists() for f in old_files)
    dbt(["run", "-s", "sporting_event", "--full-refresh"])
    assert not any(f.exists() for f in old_files)
    assert spark.table("marts.sporting_event").count() > 0
