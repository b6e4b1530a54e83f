"""The cluster knobs: read once by Settings, applied by spark_conf only off a local master."""

from __future__ import annotations

import pytest

from floe.runtime import Settings, spark_conf
from floe.runtime.settings import SettingsError

PG = "jdbc:postgresql://127.0.0.1:5432/floe"


def test_defaults_keep_a_local_session_on_loopback(tmp_path):
    s = Settings.from_env({"FLOE_HOME": str(tmp_path)})
    assert s.is_local_master and s.cluster_dir == tmp_path / "cluster"
    assert (s.cluster_cores, s.cluster_memory, s.cluster_run_as) == (2, "2g", "postgres")
    conf = spark_conf(s)
    assert conf["spark.driver.host"] == conf["spark.driver.bindAddress"] == "127.0.0.1"
    assert "spark.executor.memory" not in conf and "spark.eventLog.enabled" not in conf


def test_a_cluster_master_gets_executor_memory_event_log_and_the_postgresql_driver(tmp_path):
    s = Settings.from_env(
        {
            "FLOE_HOME": str(tmp_path),
            "FLOE_SPARK_MASTER": "spark://127.0.0.1:7077",
            "FLOE_CATALOG_URI": PG,
            "FLOE_CATALOG_USER": "floe",
            "FLOE_CATALOG_PASSWORD": "pw",
            "FLOE_EXECUTOR_MEMORY": "768m",
            "FLOE_SPARK_EVENT_LOG": str(tmp_path / "events"),
            "FLOE_DRIVER_HOST": "10.0.0.5",
        }
    )
    assert not s.is_local_master
    conf = spark_conf(s)
    assert conf["spark.master"] == "spark://127.0.0.1:7077"
    assert conf["spark.executor.memory"] == "768m"
    assert conf["spark.eventLog.enabled"] == "true"
    assert conf["spark.eventLog.dir"] == (tmp_path / "events").as_uri()
    assert conf["spark.driver.host"] == "10.0.0.5"
    assert conf["spark.sql.catalog.lake.uri"] == PG
    assert conf["spark.sql.catalog.lake.jdbc.user"] == "floe"
    assert any(j.endswith("postgresql.jar") for j in conf["spark.jars"].split(","))
    assert not any("sqlite" in j for j in conf["spark.jars"].split(","))
    s.ensure_dirs()
    assert (tmp_path / "events").is_dir(), "Spark refuses to start without its event log dir"


@pytest.mark.parametrize("master", ["local", "local[2]", "local[*]", "local-cluster[2,1,512]"])
def test_local_masters(master):
    assert Settings.from_env({"FLOE_SPARK_MASTER": master}).is_local_master


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("FLOE_EXECUTOR_MEMORY", "lots"),
        ("FLOE_EXECUTOR_MEMORY", "0g"),
        ("FLOE_CLUSTER_MEMORY", "2q"),
        ("FLOE_CLUSTER_CORES", "two"),
    ],
)
def test_unusable_cluster_values_name_the_variable(name, value):
    with pytest.raises(SettingsError, match=name):
        Settings.from_env({name: value})


def test_memory_sizes_are_kept_as_spark_reads_them():
    s = Settings.from_env({"FLOE_EXECUTOR_MEMORY": "1536m", "FLOE_CLUSTER_MEMORY": "3G"})
    assert (s.executor_memory, s.cluster_memory) == ("1536m", "3G")
