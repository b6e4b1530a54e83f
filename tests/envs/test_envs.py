"""Environments on real Iceberg branches (docs/envs.md), on the tests/fixtures/env_project.

Production builds env_base -> env_mart -> env_child (+ a view); an environment rebuilds
env_mart and its downstream with a changed SQL (var env_factor), audits, diffs, publishes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "env_project"
TABLES = ("marts.env_base", "marts.env_mart", "marts.env_child")


def refs(spark, table: str) -> dict[str, int]:
    return {r.name: r.snapshot_id for r in spark.sql(f"select * from {table}.refs").collect()}


def mains(spark) -> dict[str, int]:
    return {t: refs(spark, t)["main"] for t in TABLES}


def checksum(spark, table: str, ref: str = "main") -> tuple[int, int]:
    row = spark.sql(
        f"select count(*), coalesce(sum(xxhash64(*)), 0) from {table} version as of '{ref}'"
    ).first()
    return int(row[0]), int(row[1])


def test_build_audit_diff_publish_drop(spark, lakehouse, build):
    from floe.envs import create, list_envs, publish, status
    from floe.envs.diff import diff_env, keys_from_manifest

    build(["build"])
    before = mains(spark)

    create(spark, lakehouse, "dev")
    # Creating wrote no snapshot and no branch.
    assert mains(spark) == before
    assert all(set(refs(spark, t)) == {"main"} for t in TABLES)

    build(["build", "-s", "env_mart+"], env="dev", env_factor=3)
    # Main untouched by the build and its audits (data tests ran on the branch).
    assert mains(spark) == before
    assert set(refs(spark, "marts.env_base")) == {"main"}  # not rebuilt: read from main
    assert "env_dev" in refs(spark, "marts.env_mart")
    assert "env_dev" in refs(spark, "marts.env_child")
    assert spark.sql("select max(amount) from marts.env_mart").first()[0] == 199
    assert (
        spark.sql("select max(amount) from marts.env_mart version as of 'env_dev'").first()[0]
        == 3 * 199
    )
    # The view (unchanged) still reads through: in the environment it sees the branches.
    st = status(spark, lakehouse, "dev")
    assert sorted(st.changed) == ["marts.env_child", "marts.env_mart"]
    assert st.moved == []
    assert [e.name for e in list_envs(lakehouse)] == ["dev"]

    # A second build in the environment on the same input commits nothing new.
    heads = {t: refs(spark, t).get("env_dev") for t in TABLES}
    build(["build", "-s", "env_mart+"], env="dev", env_factor=3)
    assert {t: refs(spark, t).get("env_dev") for t in TABLES} == heads

    keys = keys_from_manifest(FIXTURE / "target" / "manifest.json") or {}
    keys.setdefault("marts.env_mart", ["id"])
    keys.setdefault("marts.env_child", ["grp"])
    diffs = {d.table: d for d in diff_env(spark, lakehouse, "dev", keys, examples=2)}
    mart = diffs["marts.env_mart"]
    assert mart.counts == {"added": 0, "removed": 0, "changed": 199}  # id 0 stays 0
    assert mart.changed_columns == {"amount": 199}
    assert (mart.rows_main, mart.rows_branch) == (200, 200)
    assert len(mart.examples["changed"]) == 2
    assert diffs["marts.env_child"].changed_columns == {"total_amount": 7}

    branch_sums = {t: checksum(spark, t, "env_dev") for t in st.changed}
    bytes_before = spark.sql("select count(*) from marts.env_mart.all_data_files").first()[0]
    plan = publish(spark, lakehouse, "dev")
    assert set(plan) == set(st.changed)
    for table in st.changed:
        assert refs(spark, table) == {"main": heads[table]}  # branch gone, main on its head
        assert checksum(spark, table) == branch_sums[table]
    # Metadata only: no data file written by the publish.
    assert spark.sql("select count(*) from marts.env_mart.all_data_files").first()[0] == (
        bytes_before
    )
    assert refs(spark, "marts.env_base")["main"] == before["marts.env_base"]
    assert list_envs(lakehouse) == []


def test_failing_audit_leaves_main_untouched_and_drop_removes_everything(spark, lakehouse, build):
    from floe.envs import create, drop

    build(["build"])
    before = mains(spark)
    create(spark, lakehouse, "ci")
    run = build(
        ["build", "-s", "env_mart+"],
        env="ci",
        expect_success=False,
        env_factor=2,
        env_audit_fails=True,
        env_new_model=True,
    )
    assert not run.success
    assert any("env_audit" in f for f in run.failures)
    assert mains(spark) == before
    assert spark.sql("select max(amount) from marts.env_mart").first()[0] == 199

    removed = drop(spark, lakehouse, "ci")
    assert any("branch env_ci of marts.env_mart" in line for line in removed)
    assert all(set(refs(spark, t)) == {"main"} for t in TABLES)
    assert mains(spark) == before


def test_publish_refuses_when_main_moved(spark, lakehouse, build):
    from floe.envs import MainMoved, create, publish

    build(["build"])
    create(spark, lakehouse, "late")
    build(["build", "-s", "env_mart+"], env="late", env_factor=2)
    build(["build"], env_rows=300)  # production moved on meanwhile
    with pytest.raises(MainMoved) as refused:
        publish(spark, lakehouse, "late")
    assert "marts.env_base" in str(refused.value) and "marts.env_mart" in str(refused.value)
    assert spark.sql("select count(*) from marts.env_mart").first()[0] == 300


def test_model_new_to_the_environment_lives_only_there_until_published(spark, lakehouse, build):
    from floe.envs import create, drop, publish

    build(["build"])
    create(spark, lakehouse, "feat")
    build(["build", "-s", "env_new"], env="feat", env_new_model=True)
    assert spark.sql("select count(*) from marts.env_new").first()[0] == 0  # main: empty
    assert spark.sql("select count(*) from marts.env_new version as of 'env_feat'").first()[0] == 7
    drop(spark, lakehouse, "feat")
    assert not spark.catalog.tableExists("marts.env_new")

    create(spark, lakehouse, "feat")
    build(["build", "-s", "env_new"], env="feat", env_new_model=True)
    publish(spark, lakehouse, "feat")
    assert spark.sql("select count(*) from marts.env_new").first()[0] == 7
    props = {r[0] for r in spark.sql("show tblproperties marts.env_new").collect()}
    assert "floe.env.created" not in props


def test_unknown_environment_fails_the_build_naming_the_fix(spark, lakehouse, build):
    run = build(["build", "-s", "env_base"], env="nope", expect_success=False)
    assert not run.success
    assert "floe env create nope" in str(run.exception or run.failures)


# -- `floe env publish --rebuild`: main moved under the environment, so it is rebuilt on
# top of the new main (with its audit) before publishing (docs/envs.md, "Publish").


def test_rebuild_on_top_of_a_moved_main_then_publish(spark, lakehouse, build):
    from floe.envs import MainMoved, create, list_envs, publish, status
    from floe.envs.rebuild import RebuildFailed, publish_rebuilt

    build(["build"])
    create(spark, lakehouse, "late")
    build(["build", "-s", "env_mart+"], env="late", env_factor=2)
    build(["build"], env_rows=300)  # production moved on meanwhile
    moved_main = {t: refs(spark, t)["main"] for t in ("marts.env_mart", "marts.env_child")}
    with pytest.raises(MainMoved):
        publish(spark, lakehouse, "late")

    asked: list[list[str]] = []

    def failing_audit(selection: list[str]) -> None:
        asked.append(selection)
        run = build(
            ["build", "-s", *selection],
            env="late",
            expect_success=False,
            env_factor=2,
            env_audit_fails=True,
        )
        if not run.success:
            raise RebuildFailed("audit failed")

    with pytest.raises(RebuildFailed):
        publish_rebuilt(spark, lakehouse, "late", failing_audit)
    # The changed models and their children were rebuilt; main untouched by the failure.
    assert asked == [["env_child+", "env_mart+"]]
    assert {t: refs(spark, t)["main"] for t in moved_main} == moved_main
    st = status(spark, lakehouse, "late")
    assert st.moved == []  # rebased: built on top of the new main
    # The rebuilt branch read the new main: 300 rows, the environment's change applied.
    assert spark.sql(
        "select count(*), max(amount) from marts.env_mart version as of 'env_late'"
    ).first() == (300, 598)

    def passing(selection: list[str]) -> None:
        build(["build", "-s", *selection], env="late", env_factor=2)

    build(["build"], env_rows=250)  # main moves again before the next try
    plan = publish_rebuilt(spark, lakehouse, "late", passing)
    assert set(plan) == {"marts.env_mart", "marts.env_child"}
    assert spark.sql("select count(*), max(amount) from marts.env_mart").first() == (250, 498)
    assert checksum(spark, "marts.env_child")[0] == 7
    assert set(refs(spark, "marts.env_mart")) == {"main"}
    assert list_envs(lakehouse) == []


def test_python_table_model_is_built_on_the_branch(spark, lakehouse, build):
    from floe.envs import create, publish

    build(["build"], env_python_model=True)
    main_total = spark.sql("select sum(py_total) from marts.env_py").first()[0]
    main_id = refs(spark, "marts.env_py")["main"]
    create(spark, lakehouse, "py")
    build(["build", "-s", "env_mart+"], env="py", env_factor=2, env_python_model=True)
    # dbt-spark's Python write would have replaced main's table; the branch got the rows.
    assert refs(spark, "marts.env_py")["main"] == main_id
    assert spark.sql("select sum(py_total) from marts.env_py").first()[0] == main_total
    branch_total = spark.sql(
        "select sum(py_total) from marts.env_py version as of 'env_py'"
    ).first()[0]
    assert branch_total == 2 * main_total
    assert not spark.catalog.tableExists("floe_env_rows__env_py")  # the rows' view went
    publish(spark, lakehouse, "py")
    assert spark.sql("select sum(py_total) from marts.env_py").first()[0] == branch_total
