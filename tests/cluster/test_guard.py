"""The cluster target runs every model on a cluster or fails, saying how to fix it."""

from __future__ import annotations

from pathlib import Path

import pytest

from floe.cluster.guard import ClusterTargetError, require_shared_catalog
from floe.runtime import Settings

ROOT = Path(__file__).resolve().parents[2]


def test_a_sqlite_catalog_is_refused_naming_the_file(tmp_path):
    settings = Settings.from_env({"FLOE_HOME": str(tmp_path)})
    with pytest.raises(
        ClusterTargetError, match=r"SQLite file .*catalog\.db.*floe catalog migrate"
    ):
        require_shared_catalog(settings)
    (tmp_path / "cluster").mkdir()
    (tmp_path / "cluster" / "state.json").write_text("{}")
    with pytest.raises(ClusterTargetError, match=r'eval "\$\(floe cluster env\)"'):
        require_shared_catalog(settings)
    shared = Settings.from_env({"FLOE_CATALOG_URI": "jdbc:postgresql://db:5432/floe"})
    require_shared_catalog(shared)  # no error


def test_python_models_refuse_a_sql_only_method():
    from dbt_common.exceptions import DbtRuntimeError

    from floe.adapter import FloeCredentials, SessionPythonJobHelper

    creds = FloeCredentials(method="thrift", host="h", schema="default")
    helper = SessionPythonJobHelper({"schema": "raw", "alias": "weather"}, creds)
    with pytest.raises(DbtRuntimeError, match=r"raw\.weather cannot run on a target with method"):
        helper.submit("raise AssertionError('must not run')")


@pytest.mark.integration
def test_cluster_target_in_a_process_with_a_local_session_fails_loudly(spark, lakehouse, dbt):
    """This pytest process holds a local session; the cluster target must not use it."""
    run = dbt(
        ["build", "--target", "cluster", "-s", "raw_reference__product_priority"],
        expect_success=False,
    )
    assert not run.success
    message = str(run.exception) + "\n".join(run.failures)
    assert "the cluster target runs every model on a cluster" in message
    assert "local[" in message and "FLOE_SPARK_MASTER" in message
    assert not spark.catalog.tableExists("raw.product_priority"), "no model ran locally"
