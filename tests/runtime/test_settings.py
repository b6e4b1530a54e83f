from pathlib import Path

from floe.runtime import Settings, spark_conf
from floe.runtime.settings import SQLITE_URI_PARAMS


def test_defaults_live_under_floe_home(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    s = Settings.from_env({})
    assert s.home == tmp_path / ".floe"
    assert s.landing == tmp_path / ".floe" / "landing"
    assert s.warehouse_path == tmp_path / ".floe" / "warehouse"
    assert s.sqlite_path == tmp_path / ".floe" / "catalog.db"
    # WAL + busy timeout on every SQLite catalog URI (STACK-NOTES: SQLITE_BUSY without).
    assert s.catalog_uri.endswith(SQLITE_URI_PARAMS)


def test_environment_overrides_each_place(tmp_path):
    env = {
        "FLOE_HOME": str(tmp_path / "h"),
        "FLOE_LANDING": str(tmp_path / "in"),
        "FLOE_WAREHOUSE": str(tmp_path / "wh"),
        "FLOE_CATALOG_URI": "jdbc:postgresql://127.0.0.1:5432/floe",
    }
    s = Settings.from_env(env)
    assert s.home == tmp_path / "h"
    assert s.landing == tmp_path / "in"
    assert s.warehouse == (tmp_path / "wh").as_uri()
    assert not s.is_sqlite and s.sqlite_path is None


def test_object_store_warehouse_is_kept_verbatim(tmp_path):
    s = Settings.from_env({"FLOE_HOME": str(tmp_path), "FLOE_WAREHOUSE": "s3://bucket/lake"})
    assert s.warehouse == "s3://bucket/lake"
    assert s.warehouse_path is None


def test_spark_conf_declares_the_lake_catalog_as_default(tmp_path):
    conf = spark_conf(Settings.from_env({"FLOE_HOME": str(tmp_path)}))
    assert conf["spark.sql.defaultCatalog"] == "lake"
    assert conf["spark.sql.catalog.lake"] == "org.apache.iceberg.spark.SparkCatalog"
    assert conf["spark.sql.catalog.lake.type"] == "jdbc"
    assert conf["spark.sql.catalog.lake.uri"].startswith(f"jdbc:sqlite:{tmp_path}")
    assert "IcebergSparkSessionExtensions" in conf["spark.sql.extensions"]
    jars = conf["spark.jars"].split(",")
    assert any("iceberg-spark-runtime-3.5_2.12" in j for j in jars)
    assert any(Path(j).name.startswith("sqlite-jdbc") for j in jars)
