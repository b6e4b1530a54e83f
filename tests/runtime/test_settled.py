"""Settled steps: skipped only while every input is as it was when nothing was left to do."""

from __future__ import annotations

import json

import pytest

from floe.runtime.settled import RowsOf, TableAt, forget, inputs_fingerprint, is_settled, remember
from floe.runtime.tables import rows_unchanged_since


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


def test_other_writers_rows_of_a_shared_table_leave_a_step_settled(spark, lakehouse):
    """One dimension's memo outlives another's ledger rows, not a change to its own."""
    spark.sql(
        "create table audit.settled_ledger (model string, load_date string) using iceberg "
        "tblproperties ('format-version' = '2', 'write.delete.mode' = 'copy-on-write')"
    )
    mine = "marts.dim_customer"
    inputs = [RowsOf("audit.settled_ledger", "model", mine)]
    args = (spark, lakehouse, "scd2", mine, inputs)
    remember(*args)  # the ledger has no snapshot yet
    spark.sql("insert into audit.settled_ledger values ('marts.dim_product', '2022-07-01')")
    assert is_settled(*args)  # another dimension's insert
    spark.sql(f"insert into audit.settled_ledger values ('{mine}', '2022-07-01')")
    assert not is_settled(*args)  # its own
    remember(*args)
    spark.sql("insert into audit.settled_ledger values ('marts.dim_product', '2022-07-02')")
    spark.sql("insert into audit.settled_ledger values ('marts.dim_store', '2022-07-02')")
    assert is_settled(*args)
    # The memo was brought up to the ledger's current snapshot.
    path = lakehouse.state_dir / "settled" / "scd2" / f"{mine}.json"
    head = spark.sql(
        "select snapshot_id from audit.settled_ledger.refs where name = 'main'"
    ).collect()[0][0]
    assert [state[1] for state in json.loads(path.read_text())["rows"].values()] == [head]
    # Deletes of another dimension's rows: files holding only its rows go (their bounds
    # are looked up in the snapshot they were removed from)...
    spark.sql("delete from audit.settled_ledger where model = 'marts.dim_store'")
    assert is_settled(*args)
    spark.sql("insert into audit.settled_ledger values ('marts.dim_product', '2022-07-03')")
    spark.sql("delete from audit.settled_ledger where model = 'marts.dim_product'")
    assert is_settled(*args)
    # ...but a file that also holds its own rows is rewritten: counted as a change.
    spark.sql(
        "insert into audit.settled_ledger select /*+ REPARTITION(1) */ * from values "
        f"('{mine}', '2022-07-02'), ('marts.dim_store', '2022-07-04')"
    )
    files = spark.sql("select lower_bounds from audit.settled_ledger.files").collect()
    assert len(files) == 2  # the two rows share one file (plus the earlier one of its own)
    remember(*args)
    spark.sql("delete from audit.settled_ledger where model = 'marts.dim_store'")
    assert not is_settled(*args)
    remember(*args)
    spark.sql(f"delete from audit.settled_ledger where model = '{mine}'")
    assert not is_settled(*args)


def test_rows_of_a_shared_table_err_towards_changed(spark, lakehouse):
    table = "audit.settled_shared"
    spark.sql(f"create table {table} (model string, n int) using iceberg")
    spark.sql(f"insert into {table} values ('a', 1)")
    since = spark.sql(f"select snapshot_id from {table}.snapshots").collect()[0][0]
    # Iceberg keeps 16 characters of a string bound: two names sharing that prefix
    # cannot be told apart, so the other's rows count as possibly its own.
    long_mine, long_other = "marts.shared_prefix_mine", "marts.shared_prefix_other"
    spark.sql(f"insert into {table} values ('{long_other}', 1)")
    assert not rows_unchanged_since(spark, table, since, "model", long_mine)
    assert rows_unchanged_since(spark, table, since, "model", "b")
    assert not rows_unchanged_since(spark, table, since, "model", long_other)
    assert not rows_unchanged_since(spark, table, since, "no_such_column", "b")
    assert not rows_unchanged_since(spark, "audit.no_such_table", since, "model", "b")
    assert not rows_unchanged_since(spark, table, 12345, "model", "b")  # not an ancestor
    # Rolled back past the memo's snapshot: its commit is no longer an ancestor.
    first = spark.sql(f"select min_by(snapshot_id, committed_at) from {table}.snapshots")
    head = spark.sql(f"select max_by(snapshot_id, committed_at) from {table}.snapshots")
    first_id, head_id = first.collect()[0][0], head.collect()[0][0]
    catalog = spark.conf.get("spark.sql.defaultCatalog")
    spark.sql(f"call {catalog}.system.rollback_to_snapshot('{table}', {first_id})")
    assert not rows_unchanged_since(spark, table, head_id, "model", "b")
    assert rows_unchanged_since(spark, table, first_id, "model", "b")


def test_a_table_input_changes_with_any_commit_or_only_with_row_changes(spark, lakehouse):
    """TableAt: a feed's raw table (any commit counts) and a rebuilt table's own state
    (compactions do not: same rows), per ref; another table of the same name never."""
    spark.sql("create table marts.settled_own (k bigint) using iceberg")
    spark.sql("insert into marts.settled_own values (1)")
    spark.sql("insert into marts.settled_own values (2)")
    strict = (spark, lakehouse, "feeds", "x.strict", [TableAt("marts.settled_own")])
    lenient = (
        spark,
        lakehouse,
        "tables",
        "marts.settled_own",
        [TableAt("marts.settled_own", same_rows_ok=True)],
    )
    for args in (strict, lenient):
        assert not is_settled(*args, "salt")
        remember(*args, "salt")
        assert is_settled(*args, "salt")
        assert not is_settled(*args, "other salt")

    spark.sql(
        f"call {lakehouse.catalog_name}.system.rewrite_data_files(table => 'marts.settled_own', "
        "options => map('rewrite-all', 'true'))"
    ).collect()
    assert not is_settled(*strict, "salt")  # a feed's memo: any commit
    assert is_settled(*lenient, "salt")  # a compaction keeps the rows
    assert is_settled(*lenient, "salt")  # brought up to the compaction's snapshot

    spark.sql("insert into marts.settled_own values (3)")
    assert not is_settled(*lenient, "salt")
    remember(*lenient, "salt")
    spark.sql("create or replace table marts.settled_own (k bigint) using iceberg")
    spark.sql("insert into marts.settled_own values (3)")
    assert not is_settled(*lenient, "salt")  # replaced by anyone: rebuilt

    # A branch's memo follows that branch only.
    spark.sql("alter table marts.settled_own create branch env_a")
    on_branch = (
        spark,
        lakehouse,
        "tables",
        "marts.settled_own.env_a",
        [TableAt("marts.settled_own", "env_a", same_rows_ok=True)],
    )
    remember(*on_branch, "salt")
    spark.sql("insert into marts.settled_own values (4)")  # main moves on
    assert is_settled(*on_branch, "salt")
    spark.sql("insert into marts.settled_own.branch_env_a values (5)")
    assert not is_settled(*on_branch, "salt")
    # A table without the ref has nothing to vouch for; forget removes a memo.
    assert not is_settled(
        spark,
        lakehouse,
        "tables",
        "marts.settled_own.env_b",
        [TableAt("marts.settled_own", "env_b", same_rows_ok=True)],
        "salt",
    )
    forget(lakehouse, "tables", "marts.settled_own")
    assert not (lakehouse.state_dir / "settled" / "tables" / "marts.settled_own.json").exists()
