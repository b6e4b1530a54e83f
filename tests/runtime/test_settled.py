"""Settled steps: skipped only while every input is as it was when nothing was left to do."""

from __future__ import annotations

import pytest

from floe.runtime.settled import inputs_fingerprint, is_settled, remember


def test_a_settled_step_stays_settled_until_an_input_changes(spark, lakehouse):
    spark.sql("create table marts.settled_t (k bigint) using iceberg")
    spark.sql("insert into marts.settled_t values (1)")
    spark.sql("create table marts.settled_u (k bigint) using iceberg")
    spark.sql("insert into marts.settled_u values (2)")
    spark.sql("create or replace view marts.settled_v as select k + 1 as k from marts.settled_t")
    inputs = ["marts.settled_v", "marts.settled_u"]
    args = (spark, lakehouse, "scd2", "marts.dim_x", inputs)

    assert not is_settled(*args, "run_date=")  # never remembered
    remember(*args, "run_date=")
    assert (lakehouse.state_dir / "settled" / "scd2" / "marts.dim_x.json").is_file()
    assert is_settled(*args, "run_date=")
    assert not is_settled(*args, "run_date=2022-07-01")  # other salt

    spark.sql("insert into marts.settled_t values (3)")  # a commit under the view
    assert not is_settled(*args, "run_date=")
    remember(*args, "run_date=")
    assert is_settled(*args, "run_date=")

    spark.sql("create or replace view marts.settled_v as select k + 2 as k from marts.settled_t")
    assert not is_settled(*args, "run_date=")  # the view changed
    remember(*args, "run_date=")
    spark.sql("delete from marts.settled_u where k = 2")  # a commit to a table input
    assert not is_settled(*args, "run_date=")


def test_inputs_without_a_fingerprint_are_never_settled(spark, lakehouse):
    spark.sql("create table marts.settled_w (k bigint) using iceberg")
    spark.sql("insert into marts.settled_w values (1)")
    spark.sql(
        "create or replace view marts.settled_now as select k, now() as t from marts.settled_w"
    )
    assert inputs_fingerprint(spark, ["marts.settled_now"], "") is None
    assert inputs_fingerprint(spark, ["marts.no_such_table"], "") is None
    remember(spark, lakehouse, "scd2", "marts.dim_y", ["marts.settled_now"])
    assert not (lakehouse.state_dir / "settled" / "scd2" / "marts.dim_y.json").exists()
    assert not is_settled(spark, lakehouse, "scd2", "marts.dim_y", ["marts.settled_now"])
    # An unreadable memo is no memo.
    path = lakehouse.state_dir / "settled" / "scd2" / "marts.dim_z.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{not json")
    assert not is_settled(spark, lakehouse, "scd2", "marts.dim_z", ["marts.settled_w"])


@pytest.mark.parametrize("name", ["../etc", "a/b", "", ".hidden"])
def test_memo_names_cannot_leave_the_state_directory(spark, lakehouse, name):
    with pytest.raises(ValueError, match="not a settled-step name"):
        is_settled(spark, lakehouse, "scd2", name, [])
