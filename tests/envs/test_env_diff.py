"""`floe env diff` on small real Iceberg branches (docs/envs.md, "Diff").

The row counts come from the data files' record counts, or, where a delete file
applies, from an observation of the join; the aggregation sees only the differing rows (docs/decisions/0055-environment-build-and-diff-costs.md): these tests pin
what that must not change — row counts after an INSERT OVERWRITE on the branch, empty
sides, composite keys, bounded examples that are real differing keys.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.integration

BRANCH = "env_difftest"


@pytest.fixture
def on_branch(spark, lakehouse):
    """`on_branch(sql)`: run ``sql`` with writes going to the branch (write-audit-publish)."""

    def run(sql: str) -> None:
        spark.conf.set("spark.wap.branch", BRANCH)
        try:
            spark.sql(sql)
        finally:
            spark.conf.unset("spark.wap.branch")

    spark.sql("create namespace if not exists marts")
    return run


def _table(spark, name: str, select: str) -> str:
    table = f"marts.{name}"
    spark.sql(f"drop table if exists {table}")
    spark.sql(
        f"create table {table} using iceberg "
        f"tblproperties ('write.wap.enabled' = 'true') as {select}"
    )
    return table


def test_counts_columns_and_examples_after_insert_overwrite(spark, on_branch):
    from floe.envs.diff import diff_table

    table = _table(
        spark,
        "diff_orders",
        "select id, id % 3 as part, concat('n', id) as name, id * 10 as amount from range(100)",
    )
    # The branch: ids 0-9 gone, 100-104 new, amount changed for ids divisible by 7,
    # name too for 14, 28 (so the changed columns count separately).
    on_branch(
        f"insert overwrite {table} by name "
        "select id, id % 3 as part, "
        "case when id % 14 = 0 then concat('m', id) else concat('n', id) end as name, "
        "case when id % 7 = 0 then id * 11 else id * 10 end as amount "
        "from range(10, 105)"
    )
    d = diff_table(spark, table, BRANCH, ["id", "part"], examples=3)
    changed = [i for i in range(10, 100) if i % 7 == 0]
    assert (d.rows_main, d.rows_branch) == (100, 95)
    assert d.counts == {"added": 5, "removed": 10, "changed": len(changed)}
    assert d.changed_columns == {
        "amount": len(changed),
        "name": len([i for i in changed if i % 14 == 0]),
    }
    for kind, allowed in (
        ("added", set(range(100, 105))),
        ("removed", set(range(10))),
        ("changed", set(changed)),
    ):
        picked = d.examples[kind]
        assert 1 <= len(picked) <= 3
        assert {e["id"] for e in picked} <= allowed
        assert all(e["part"] == e["id"] % 3 for e in picked)
    for e in d.examples["changed"]:
        want = ["name", "amount"] if e["id"] % 14 == 0 else ["amount"]
        assert e["columns"] == want


def test_no_change_and_empty_sides(spark, on_branch, monkeypatch):
    from floe.envs import diff
    from floe.envs.diff import diff_table

    same = _table(spark, "diff_same", "select id, id as v from range(20)")
    on_branch(f"insert overwrite {same} by name select id, id as v from range(20)")
    d = diff_table(spark, same, BRANCH, ["id"])
    assert d.counts == {"added": 0, "removed": 0, "changed": 0}
    assert (d.rows_main, d.rows_branch) == (20, 20)
    assert d.examples == {} and d.changed_columns == {}

    # New in the environment: created empty on main, filled on the branch.
    new = _table(spark, "diff_new", "select id, id as v from range(5) where false")
    on_branch(f"insert overwrite {new} by name select id, id as v from range(5)")
    d = diff_table(spark, new, BRANCH, ["id"])
    assert d.counts == {"added": 5, "removed": 0, "changed": 0}
    assert (d.rows_main, d.rows_branch) == (0, 5)

    # Everything deleted on the branch.
    gone = _table(spark, "diff_gone", "select id, id as v from range(4)")
    on_branch(f"delete from {gone} where true")
    d = diff_table(spark, gone, BRANCH, ["id"])
    assert d.counts == {"added": 0, "removed": 4, "changed": 0}
    assert (d.rows_main, d.rows_branch) == (4, 0)

    # Both sides empty (an empty overwrite commits nothing: the branch is made directly).
    empty = _table(spark, "diff_empty", "select id, id as v from range(3) where false")
    spark.sql(f"alter table {empty} create branch {BRANCH}")
    d = diff_table(spark, empty, BRANCH, ["id"])
    assert d.counts == {"added": 0, "removed": 0, "changed": 0}
    assert (d.rows_main, d.rows_branch) == (0, 0)

    # Where the files cannot tell and the optimizer dropped the observation, each side
    # is counted instead.
    monkeypatch.setattr(diff, "_rows_in_files", lambda table, ref: None)
    monkeypatch.setattr(diff, "_observed", lambda frame, name: None)
    d = diff_table(spark, gone, BRANCH, ["id"])
    assert (d.rows_main, d.rows_branch) == (4, 0)
    d = diff_table(spark, new, BRANCH, ["id"])
    assert (d.rows_main, d.rows_branch) == (0, 5)


def test_branch_name_is_checked(spark, on_branch):
    from floe.envs.diff import diff_table

    table = _table(spark, "diff_checked", "select id from range(2)")
    with pytest.raises(ValueError, match="not a branch name"):
        diff_table(spark, table, "env_x' or '1'='1", ["id"])


def test_counts_with_delete_files_come_from_the_rows(spark, on_branch):
    """Data files' record counts are the row count only without delete files: a
    merge-on-read delete on the branch makes the diff count the rows themselves."""
    from floe.envs import diff
    from floe.envs.core import _iceberg_table

    table = _table(spark, "diff_mor", "select id, id as v from range(50)")
    spark.sql(
        f"alter table {table} set tblproperties ('format-version' = '2', "
        "'write.delete.mode' = 'merge-on-read', 'write.update.mode' = 'merge-on-read')"
    )
    on_branch(f"delete from {table} where id < 8")
    on_branch(f"update {table} set v = -1 where id = 20")
    loaded = _iceberg_table(spark, table)
    refs = loaded.refs()
    assert diff._rows_in_files(loaded, refs.get("main").snapshotId()) == 50
    assert diff._rows_in_files(loaded, refs.get(BRANCH).snapshotId()) is None  # deletes
    d = diff.diff_table(spark, table, BRANCH, ["id"])
    assert (d.rows_main, d.rows_branch) == (50, 42)
    assert d.counts == {"added": 0, "removed": 8, "changed": 1}
    assert d.changed_columns == {"v": 1}
    assert d.examples["changed"] == [{"id": 20, "columns": ["v"]}]


def test_columns_named_like_the_plan_s_own_names_are_compared(spark, on_branch):
    from floe.envs.diff import diff_table

    table = _table(
        spark, "diff_names", "select id as kind, id % 2 as h, id as m__0, id as d__0 from range(6)"
    )
    on_branch(
        f"insert overwrite {table} by name "
        "select id as kind, id % 2 as h, id as m__0, "
        "case when id = 3 then -1 else id end as d__0 from range(1, 7)"
    )
    d = diff_table(spark, table, BRANCH, ["kind", "h"], examples=0)
    assert d.counts == {"added": 1, "removed": 1, "changed": 1}
    assert d.changed_columns == {"d__0": 1}
    assert d.examples == {}
    d = diff_table(spark, table, BRANCH, ["kind", "h"], examples=1)
    assert d.examples["changed"] == [{"kind": 3, "h": 1, "columns": ["d__0"]}]
