"""Statement settings: Spark settings one statement asks for, set for its run only."""

from __future__ import annotations

import threading

import pytest

from floe.runtime.statements import STATEMENT_SETTINGS, statement_marks, statement_settings

BROADCAST = "spark.sql.autoBroadcastJoinThreshold"
BLOOM_SCAN = "spark.sql.optimizer.runtime.bloomFilter.applicationSideScanSizeThreshold"


def test_marks_are_read_from_comments_anywhere_in_the_statement():
    sql = '/* {"app": "dbt"} */\n/* floe:runtime_filter */\nmerge into t using s on t.k = s.k'
    assert statement_marks(sql) == ["runtime_filter"]
    assert statement_marks("select 1 /* floe: storage_partitioned_join */") == [
        "storage_partitioned_join"
    ]
    assert statement_marks("select '/* not a mark */'") == []


def test_an_unknown_mark_is_refused_not_ignored():
    with pytest.raises(ValueError, match=r"unknown floe statement setting.*runtime_filtr"):
        statement_marks("/* floe:runtime_filtr */ merge into t using s on true")


def test_settings_hold_for_the_block_and_are_put_back(spark):
    spark.conf.set(BROADCAST, "5MB")
    spark.conf.unset(BLOOM_SCAN)
    try:
        with statement_settings(spark, ["runtime_filter"]):
            assert spark.conf.get(BROADCAST) == "-1"
            assert spark.conf.get(BLOOM_SCAN) == STATEMENT_SETTINGS["runtime_filter"][BLOOM_SCAN]
        assert spark.conf.get(BROADCAST) == "5MB"  # the value before, not Spark's default
        assert spark.conf.get(BLOOM_SCAN, None) is None  # unset again
    finally:
        spark.conf.unset(BROADCAST)


def test_a_failing_statement_puts_the_settings_back(spark):
    with pytest.raises(RuntimeError), statement_settings(spark, ["runtime_filter"]):
        raise RuntimeError("the MERGE failed")
    assert spark.conf.get(BROADCAST, None) is None


def test_overlapping_statements_keep_them_until_the_last_ends(spark):
    first_in, second_done = threading.Event(), threading.Event()
    seen = []

    def other() -> None:
        first_in.wait()
        with statement_settings(spark, ["runtime_filter"]):
            seen.append(spark.conf.get(BROADCAST))
        second_done.set()

    worker = threading.Thread(target=other)
    worker.start()
    with statement_settings(spark, ["runtime_filter"]):
        first_in.set()
        second_done.wait(30)
        # the other statement ended first: the settings stay for this one
        assert spark.conf.get(BROADCAST) == "-1"
    worker.join()
    assert seen == ["-1"]
    assert spark.conf.get(BROADCAST, None) is None


MERGE = """
    merge into marts.rf_target as t
    using (select * from rf_batch where action in ('delete', 'upsert')) as s
    on t.k = s.k
    when matched and s.action = 'delete' then delete
    when matched then update set t.v = s.v
    when not matched and s.action = 'upsert' then insert (k, v) values (s.k, s.v)
"""


def test_a_runtime_filtered_merge_prefilters_the_table_and_changes_nothing_else(spark, lakehouse):
    """The MERGE's plan filters the table's rows by a Bloom filter of the batch's keys
    before the join; the table it leaves is the one the plain MERGE leaves."""
    for table in ("marts.rf_target", "marts.rf_plain"):
        spark.sql(
            f"create table {table} using iceberg tblproperties ('format-version'='2',"
            " 'write.merge.mode'='merge-on-read', 'write.update.mode'='merge-on-read',"
            " 'write.delete.mode'='merge-on-read')"
            " as select id as k, concat('v', id) as v from range(20000)"
        )
    spark.sql(
        "create or replace temporary view rf_batch as select * from values"
        " (5L, 'x', 'upsert'), (7L, null, 'delete'), (20005L, 'new', 'upsert'),"
        " (30000L, null, 'delete') as b(k, v, action)"
    )
    spark.sql("cache table rf_batch")
    try:
        with statement_settings(spark, ["runtime_filter"]):
            plan = spark.sql("explain " + MERGE).first()[0]
            spark.sql(MERGE)
        spark.sql(MERGE.replace("rf_target", "rf_plain"))
    finally:
        spark.sql("uncache table rf_batch")
    assert "might_contain" in plan and "bloom_filter_agg" in plan
    assert "might_contain" not in spark.sql("explain " + MERGE).first()[0]
    got = spark.table("marts.rf_target").orderBy("k").collect()
    assert got == spark.table("marts.rf_plain").orderBy("k").collect()
    assert len(got) == 20000 and (5, "x") in got and (20005, "new") in got
    assert not any(r.k == 7 for r in got)
