"""The maintenance run-operations call Iceberg's procedures on a real table."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.integration


def test_run_operations_compact_and_expire(spark, lakehouse, dbt):
    spark.sql("create table marts.ops_demo (id bigint, v string) using iceberg")
    for i in range(4):  # four commits, four small data files
        spark.sql(f"insert into marts.ops_demo values ({i}, 'v{i}')")
    files = spark.sql("select count(*) from marts.ops_demo.files").collect()[0][0]
    assert files == 4

    dbt(["run-operation", "iceberg_compact", "--args", "{table: marts.ops_demo}"])
    assert spark.sql("select count(*) from marts.ops_demo.files").collect()[0][0] == 1

    dbt(
        [
            "run-operation",
            "iceberg_expire_snapshots",
            "--args",
            "{table: marts.ops_demo, retain_last: 1, older_than_days: -1}",
        ]
    )
    assert spark.sql("select count(*) from marts.ops_demo.snapshots").collect()[0][0] == 1
    dbt(["run-operation", "iceberg_rewrite_manifests", "--args", "{table: marts.ops_demo}"])
    dbt(["run-operation", "iceberg_remove_orphan_files", "--args", "{table: marts.ops_demo}"])
    assert sorted(r.id for r in spark.table("marts.ops_demo").collect()) == [0, 1, 2, 3]

    run = dbt(
        ["run-operation", "iceberg_compact", "--args", "{table: marts.ops_demo, strategy: zorder}"],
        expect_success=False,
    )
    assert not run.success
