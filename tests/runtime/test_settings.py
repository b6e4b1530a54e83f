"""Settings: the one reader of the environment, and what it yields."""

import ast
from pathlib import Path

import pytest

from floe.runtime import Settings, spark_conf
from floe.runtime.settings import SQLITE_URI_PARAMS, SettingsError


def test_defaults_live_under_floe_home(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    s = Settings.from_env({})
    assert s.home == tmp_path / ".floe"
    assert s.landing == tmp_path / ".floe" / "landing"
    assert s.warehouse_path == tmp_path / ".floe" / "warehouse"
    assert s.sqlite_path == tmp_path / ".floe" / "catalog.db"
    # WAL + busy timeout on every SQLite catalog URI (docs/runtime.md: SQLITE_BUSY without).
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


def test_spark_knobs_come_from_settings(tmp_path):
    s = Settings.from_env(
        {
            "FLOE_HOME": str(tmp_path),
            "FLOE_SPARK_CORES": "2",
            "FLOE_DRIVER_MEMORY": "1g",
            "FLOE_SPARK_UI": "true",
            "FLOE_SHUFFLE_PARTITIONS": "8",
            "FLOE_SPARK_LOG_LEVEL": "WARN",
        }
    )
    assert (s.spark_master_url, s.spark_log_level) == ("local[2]", "WARN")
    conf = spark_conf(s)
    assert conf["spark.master"] == "local[2]"
    assert conf["spark.driver.memory"] == "1g"
    assert conf["spark.ui.enabled"] == "true"
    assert conf["spark.sql.shuffle.partitions"] == "8"
    master = Settings.from_env({"FLOE_SPARK_MASTER": "spark://127.0.0.1:7077"})
    assert master.spark_master_url == "spark://127.0.0.1:7077"


def test_empty_environment_gives_the_documented_defaults():
    s = Settings.from_env({})
    assert (s.spark_master_url, s.driver_memory, s.spark_ui, s.shuffle_partitions) == (
        "local[*]",
        "4g",
        False,
        4,
    )
    assert (s.allow_maven, s.jar_override("iceberg"), s.glue_endpoint) == (False, None, None)
    assert s.aws_region == "us-east-1" and s.project_dir is None
    assert s.registry_dir == s.home / "state" / "registry"


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("FLOE_SPARK_UI", "maybe"),
        ("FLOE_ALLOW_MAVEN", "2"),
        ("FLOE_SHUFFLE_PARTITIONS", "four"),
        ("FLOE_SHUFFLE_PARTITIONS", "0"),
    ],
)
def test_unusable_values_name_the_variable(name, value):
    with pytest.raises(SettingsError, match=name):
        Settings.from_env({name: value})


def test_glue_endpoint_and_region_fall_back_like_aws_tools():
    s = Settings.from_env({"AWS_ENDPOINT_URL": "http://a", "AWS_DEFAULT_REGION": "eu-west-1"})
    assert (s.glue_endpoint, s.aws_region) == ("http://a", "eu-west-1")
    s = Settings.from_env(
        {"FLOE_GLUE_ENDPOINT": "http://g", "AWS_ENDPOINT_URL": "http://a", "AWS_REGION": "x"}
    )
    assert (s.glue_endpoint, s.aws_region) == ("http://g", "x")


def test_password_is_not_printed():
    s = Settings.from_env({"FLOE_CATALOG_PASSWORD": "s3cret"})
    assert s.catalog_password == "s3cret" and "s3cret" not in repr(s)


def test_project_and_schemas_dir(tmp_path, monkeypatch):
    project = tmp_path / "proj"
    (project / "sub").mkdir(parents=True)
    (project / "dbt_project.yml").write_text("name: x\n")
    explicit = Settings.from_env({"FLOE_PROJECT_DIR": str(project)})
    assert explicit.dbt_project_dir() == project
    assert explicit.schemas_dir == project / "schemas"
    assert Settings.from_env({"DBT_PROJECT_DIR": str(project)}).project_dir == project
    monkeypatch.chdir(project / "sub")
    found = Settings.from_env({})
    assert found.project_dir is None
    assert found.dbt_project_dir() == project  # nearest dbt_project.yml upwards
    assert found.schemas_dir == project / "schemas"
    (project / "sub" / "schemas").mkdir()
    assert found.schemas_dir == project / "sub" / "schemas"  # ./schemas wins when present


SRC = Path(__file__).resolve().parents[2] / "src"
_NOT_YET: set[str] = set()


def _environment_reads(source: str) -> list[int]:
    """Lines that read os.environ / os.getenv (writing variables for children is fine)."""
    tree = ast.parse(source)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    writes = {"setdefault", "pop", "update"}
    lines = []
    for node in ast.walk(tree):
        name = ast.unparse(node) if isinstance(node, ast.Attribute) else ""
        if name == "os.getenv":
            lines.append(node.lineno)
        if name != "os.environ":
            continue
        parent = parents[node]
        if isinstance(parent, ast.Attribute) and parent.attr in writes:
            continue
        if isinstance(parent, ast.Subscript) and isinstance(parent.ctx, ast.Store | ast.Del):
            continue
        lines.append(node.lineno)
    return sorted(lines)


def test_the_reader_scan_finds_reads_and_allows_writes():
    reads = """import os
a = os.environ.get("X")
b = os.environ["X"]
c = "X" in os.environ
env = os.environ
d = os.getenv("X")
"""
    assert _environment_reads(reads) == [2, 3, 4, 5, 6]
    writes = """import os
os.environ["X"] = "1"
os.environ.setdefault("Y", "2")
os.environ.pop("Z", None)
del os.environ["W"]
"""
    assert _environment_reads(writes) == []


def test_settings_is_the_only_reader_of_the_environment():
    offenders = {}
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel in _NOT_YET or rel == "floe/runtime/settings.py":
            continue
        lines = _environment_reads(path.read_text())
        if lines:
            offenders[rel] = lines
    assert offenders == {}, "read the environment through floe.runtime.settings.Settings"
