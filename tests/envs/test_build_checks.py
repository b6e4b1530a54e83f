"""What an environment build checks before it writes a table, from one catalog read
(floe.envs.table_for_build, docs/envs.md; docs/decisions/0055-environment-build-and-diff-costs.md)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.integration

STEP = ["build", "-s", "env_base", "env_mart"]


def test_table_for_build_reads_branch_property_and_columns(spark, lakehouse):
    from floe.envs import EnvError, table_for_build

    spark.sql("create namespace if not exists marts")
    spark.sql("drop table if exists marts.checks_plain")
    spark.sql("create table marts.checks_plain (ID bigint, Name string) using iceberg")
    state = table_for_build(spark, "marts.checks_plain", "env_x")
    assert state == {"exists": True, "has_branch": False, "wap": False, "columns": ["id", "name"]}

    spark.sql("alter table marts.checks_plain set tblproperties ('write.wap.enabled' = 'true')")
    spark.sql("insert into marts.checks_plain values (1, 'a')")
    spark.sql("alter table marts.checks_plain create branch env_x")
    state = table_for_build(spark, "marts.checks_plain", "env_x")
    assert (state["has_branch"], state["wap"]) == (True, True)
    assert table_for_build(spark, "marts.checks_plain", "env_y")["has_branch"] is False

    assert table_for_build(spark, "marts.checks_missing", "env_x")["exists"] is False
    with pytest.raises(EnvError, match=r"schema\.table"):
        table_for_build(spark, "marts.x; drop", "env_x")


def test_build_refuses_a_changed_column_list_and_adds_wap_where_missing(spark, lakehouse, build):
    from floe.envs import create

    build(STEP)
    # A table from before floe's materializations set the property: the environment
    # build adds it (metadata only) before its first write goes to the branch.
    spark.sql("alter table marts.env_mart unset tblproperties ('write.wap.enabled')")
    main_before = spark.sql("select count(*) from marts.env_mart").first()[0]
    create(spark, lakehouse, "checks")
    build(STEP, "checks", env_factor=5)
    rows = spark.sql("show tblproperties marts.env_mart ('write.wap.enabled')").collect()
    assert rows[0][1] == "true"
    refs = {r.name for r in spark.sql("select name from marts.env_mart.refs").collect()}
    assert "env_checks" in refs
    assert spark.sql("select count(*) from marts.env_mart").first()[0] == main_before

    run = build(STEP, "checks", expect_success=False, env_factor=5, env_extra_column=True)
    assert not run.success
    assert "changes the table's columns" in " ".join(run.failures)
