"""freeze_view: a view computed once, whose rows a MERGE into its own input reads as they were."""

from __future__ import annotations

import pytest

from floe.runtime.views import freeze_view, pin_view, release_view


def test_a_frozen_view_keeps_its_rows_while_its_table_changes(spark, lakehouse):
    spark.sql("create table marts.frozen_t (k bigint, v string) using iceberg")
    spark.sql("insert into marts.frozen_t values (1, 'a'), (2, 'b')")
    spark.sql(
        "create or replace temporary view frozen_src as"
        " select k, upper(v) as v from marts.frozen_t where k = 1"
    )
    freeze_view(spark, "frozen_src", "frozen_rows")
    try:
        # The MERGE's source reads the target: its rows are those computed before it.
        spark.sql(
            "merge into marts.frozen_t t using frozen_rows s on t.k = s.k"
            " when matched then update set t.v = s.v"
            " when not matched then insert (k, v) values (s.k, s.v)"
        )
        spark.sql("insert into marts.frozen_t values (1, 'c')")
        assert sorted(spark.table("frozen_rows").collect()) == [(1, "A")]
        assert sorted(spark.table("frozen_src").collect()) == [(1, "A"), (1, "C")]
        assert sorted(spark.table("marts.frozen_t").collect()) == [(1, "A"), (1, "c"), (2, "b")]
        # The MERGE read the frozen rows, not a re-run of the view over the target.
        plan = spark.sql(
            "explain merge into marts.frozen_t t using frozen_rows s on t.k = s.k"
            " when matched then update set t.v = s.v"
        ).collect()[0][0]
        assert "ExistingRDD" in plan
        assert "upper(" not in plan
    finally:
        release_view(spark, "frozen_rows")
    assert not spark.catalog.tableExists("frozen_rows")
    release_view(spark, "frozen_rows")  # twice: nothing left to free, no error


def test_a_frozen_view_is_as_large_as_its_rows_not_its_plans_estimate(spark):
    # Spark estimates an inner join as the product of its sides: four joins of 1,000
    # rows pass a petabyte, which turned off the MERGE's runtime filter (ADR 0064).
    spark.range(1000).selectExpr("id as k", "id % 7 as v").createOrReplaceTempView("sized_t")
    spark.sql(
        "create or replace temporary view sized_src as select a.k, a.v from sized_t a"
        " join sized_t b on a.k = b.k join sized_t c on a.k = c.k join sized_t d on a.k = d.k"
    )
    estimate = spark.table("sized_src")._jdf.queryExecution().optimizedPlan().stats()
    assert int(estimate.sizeInBytes()) > 2**50
    freeze_view(spark, "sized_src", "sized_rows")
    try:
        frozen = spark.table("sized_rows")
        size = int(frozen._jdf.queryExecution().optimizedPlan().stats().sizeInBytes())
        assert 0 < size < 2**20
        assert frozen.count() == 1000 and frozen.where("v = 3").count() == 143
    finally:
        release_view(spark, "sized_rows")
    assert not spark.catalog.tableExists("sized_rows")


@pytest.mark.parametrize("name", ["x; drop table t", "1abc", "a.b", ""])
def test_only_plain_view_names_are_accepted(spark, name):
    with pytest.raises(ValueError, match="not a temporary view name"):
        freeze_view(spark, "frozen_src", name)


def _stored_plan(spark, view: str) -> bool:
    """Whether temporary view ``view`` holds an analyzed plan (else only its text)."""
    raw = spark._jsparkSession.sessionState().catalog().getRawTempView(view).get()
    return raw.plan().isDefined()


def test_a_pinned_view_is_analyzed_once_and_still_reads_the_tables_now(spark, lakehouse):
    """pin_view keeps the analyzed plan, so a reader does not parse and analyze the
    query again; it is not a cache: each reading computes the rows from the tables'
    current snapshots."""
    spark.sql("create table marts.pinned_t (k bigint, v string) using iceberg")
    spark.sql("insert into marts.pinned_t values (1, 'a'), (2, 'b')")
    pin_view(spark, "select k, upper(v) as v from marts.pinned_t where k > 0", "pinned_rows")
    spark.sql(
        "create or replace temporary view text_rows as"
        " select k, upper(v) as v from marts.pinned_t where k > 0"
    )
    try:
        assert _stored_plan(spark, "pinned_rows")
        assert not _stored_plan(spark, "text_rows")  # analyzed again by every reader
        spark.sql("insert into marts.pinned_t values (3, 'c')")
        assert sorted(spark.table("pinned_rows").collect()) == [(1, "A"), (2, "B"), (3, "C")]
        plan = spark.table("pinned_rows")._jdf.queryExecution().executedPlan().toString()
        assert "BatchScan" in plan and "upper(" in plan, plan
    finally:
        spark.catalog.dropTempView("pinned_rows")
        spark.catalog.dropTempView("text_rows")
    with pytest.raises(ValueError, match="not a temporary view name"):
        pin_view(spark, "select 1", "x; drop table t")
