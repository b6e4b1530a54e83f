"""End to end on the embedded default: landing → raw (Python) → staging, twice."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

from floe.generator import GenerateOptions, generate
from floe.runtime import open_catalog

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
CUSTOMER_MODELS = "raw_customers__master+ raw_customers__address+"
FIXTURE = ROOT / "tests" / "fixtures" / "python_models_project"


def _snapshots(spark, tables):
    return {
        t: [r.snapshot_id for r in spark.sql(f"select snapshot_id from {t}.snapshots").collect()]
        for t in tables
    }


def _landed_rows(landing: Path, table: str) -> int:
    files = landing.glob(f"customers/{table}/*/*.csv")
    return sum(len(f.read_text().splitlines()) - 1 for f in files)


def test_customer_landing_builds_once_then_only_new_files(spark, lakehouse, dbt):
    generate(GenerateOptions(landing=lakehouse.landing, days=3, scale=40), ["customers"])
    dbt(["build", "-s", CUSTOMER_MODELS])
    raw = ["raw.customer_master", "raw.customer_address"]
    for table, name in zip(raw, ("customer_master", "customer_address"), strict=True):
        assert spark.table(table).count() == _landed_rows(lakehouse.landing, name)
    staged = spark.table("staging.stg_customers__master")
    assert {r.load_kind for r in staged.select("load_kind").distinct().collect()} == {
        "full",
        "changes",
    }

    before = _snapshots(spark, raw)
    dbt(["build", "-s", CUSTOMER_MODELS])
    assert _snapshots(spark, raw) == before, "a re-run with no new files commits nothing"

    generate(GenerateOptions(landing=lakehouse.landing, days=4, scale=40), ["customers"])
    dbt(["build", "-s", CUSTOMER_MODELS])
    after = _snapshots(spark, raw)
    for table in raw:
        assert len(after[table]) == len(before[table]) + 1
    assert spark.table(raw[0]).count() == _landed_rows(lakehouse.landing, "customer_master")
    days = {r[0] for r in spark.sql(f"select distinct _load_date from {raw[0]}").collect()}
    assert len(days) == 4

    # pyiceberg reads every table of the catalog, with the rows Spark sees.
    catalog = open_catalog(lakehouse)
    tables = [t for ns in catalog.list_namespaces() for t in catalog.list_tables(ns)]
    assert {".".join(t) for t in tables} >= set(raw)
    for identifier in tables:
        name = ".".join(identifier)
        arrow = catalog.load_table(identifier).scan().to_arrow()
        assert arrow.num_rows == spark.table(name).count(), name


def test_floe_build_generates_when_empty_and_summarizes(spark, lakehouse, monkeypatch):
    from click.testing import CliRunner

    from floe.cli import main

    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(
        main, ["build", "--days", "2", "--scale", "15", "-s", "+stg_customers__master"]
    )
    assert result.exit_code == 0, result.output
    assert "generated" in result.output and "customers.customer_master" in result.output
    line = next(x for x in result.output.splitlines() if x.startswith("raw.customer_master"))
    assert int(line.split()[1]) == _landed_rows(lakehouse.landing, "customer_master")


def test_malformed_manifest_fails_the_build_naming_the_file(spark, lakehouse, dbt):
    generate(GenerateOptions(landing=lakehouse.landing, days=2, scale=10), ["customers"])
    manifest = lakehouse.landing / "customers/customer_address/load_date=2022-07-02/_manifest.json"
    manifest.unlink()
    manifest.write_text(json.dumps({"kind": "sometimes"}))
    run = dbt(["build", "-s", CUSTOMER_MODELS], expect_success=False)
    assert not run.success
    failure = "\n".join(run.failures)
    assert "raw_customers__address" in failure and str(manifest) in failure
    # The independent master feed still built.
    assert spark.table("raw.customer_master").count() > 0


def test_python_models_table_and_incremental(spark, lakehouse, dbt_target_path):
    from floe.dbt_runner import run_dbt

    def build(rows: int):
        run = run_dbt(
            ["build"],
            vars={"rows": rows},
            project=FIXTURE,
            target_path=dbt_target_path / "pyfixture",
            quiet=True,
        )
        assert run.success, run.failures or run.exception

    build(5)
    assert [
        tuple(r) for r in spark.sql("select * from default.py_table order by id").collect()
    ] == [(i, i * 10) for i in range(1, 6)]
    props = {r.key: r.value for r in spark.sql("show tblproperties default.py_table").collect()}
    assert props["format-version"] == "2"
    assert props["write.delete.mode"] == "merge-on-read"
    assert spark.table("default.py_incremental").count() == 5
    static = _snapshots(spark, ["default.sql_static"])["default.sql_static"]
    build(5)  # same input: a SQL table with unchanged SQL and inputs is not rebuilt
    assert _snapshots(spark, ["default.sql_static"])["default.sql_static"] == static
    snaps = _snapshots(spark, ["default.py_incremental"])["default.py_incremental"]

    build(8)
    summary = spark.sql("select n from default.sql_summary").collect()[0][0]
    assert summary == 8, "an upstream snapshot changed, so the SQL table was rebuilt"
    inc = spark.sql("select id, value from default.py_incremental order by id").collect()
    assert [tuple(r) for r in inc] == [(i, i * 10 + 1) for i in range(1, 9)]
    after = _snapshots(spark, ["default.py_incremental"])["default.py_incremental"]
    assert after[: len(snaps)] == snaps and len(after) == len(snaps) + 1, "merged, not replaced"

    manifest = json.loads((dbt_target_path / "pyfixture" / "manifest.json").read_text())
    languages = {
        n["name"]: n["language"]
        for n in manifest["nodes"].values()
        if n["resource_type"] == "model"
    }
    assert languages == {
        "py_table": "python",
        "py_incremental": "python",
        "sql_static": "sql",
        "sql_summary": "sql",
    }
    child_map = manifest["child_map"]
    assert (
        "model.floe_python_fixture.py_incremental"
        in child_map["model.floe_python_fixture.py_table"]
    )


def test_pyiceberg_and_spark_read_each_others_tables(spark, lakehouse):
    spark.sql("create table raw.from_spark (id bigint, name string) using iceberg")
    spark.sql("insert into raw.from_spark values (1, 'a'), (2, null)")
    catalog = open_catalog(lakehouse)
    arrow = catalog.load_table("raw.from_spark").scan().to_arrow()
    assert sorted(arrow.to_pylist(), key=lambda r: r["id"]) == [
        {"id": 1, "name": "a"},
        {"id": 2, "name": None},
    ]

    table = catalog.create_table(
        "raw.from_pyiceberg", schema=pa.schema([("id", pa.int64()), ("city", pa.string())])
    )
    table.append(pa.table({"id": [7, 8], "city": ["Lyon", "Pune"]}))
    rows = spark.sql("select id, city from raw.from_pyiceberg order by id").collect()
    assert [tuple(r) for r in rows] == [(7, "Lyon"), (8, "Pune")]
