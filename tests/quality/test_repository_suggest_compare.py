"""Metrics repository history, constraint suggestion and migration validation on Iceberg."""

from __future__ import annotations

import pytest
import yaml
from click.testing import CliRunner
from pyspark.sql import functions as F

from floe.quality.cli import _checks_from_yaml, dq
from floe.quality.migration import load, summary, validate_migration
from floe.quality.suggest import suggest_checks, suggestion_yaml
from floe.quality.verification import verify

pytestmark = pytest.mark.integration


def test_repository_keeps_history_and_anomalies_use_it(spark, lakehouse):
    spark.sql("create table staging.orders (id bigint, amount double) using iceberg")
    spark.sql("insert into staging.orders select id, id * 1.5 from range(10)")
    checks = [
        "size > 0",
        {"anomaly": {"metric": "size", "strategy": "relative_rate_of_change", "max_increase": 2}},
        {"anomaly": {"metric": "mean(amount)", "strategy": "absolute_change", "max_increase": 100}},
    ]
    first = verify(spark, "staging.orders", checks)
    assert [r.status for r in first.results] == ["pass", "skip", "skip"]
    spark.sql("insert into staging.orders select id, id * 1.5 from range(10, 40)")
    second = verify(spark, "staging.orders", checks)
    assert [r.status for r in second.results] == ["pass", "fail", "pass"]
    assert "previous 10, ratio 4 > max_increase 2" in second.results[1].message
    assert second.errors != []  # the anomaly is an error-severity check

    metrics = spark.sql(
        "select run_id, snapshot_id, analyzer, columns, value from dq.metrics "
        "where analyzer = 'size' order by computed_at"
    ).collect()
    assert [m.value for m in metrics] == [10.0, 40.0]
    assert [m.run_id for m in metrics] == [first.run_id, second.run_id]
    snapshots = [
        r[0] for r in spark.sql("select snapshot_id from staging.orders.snapshots").collect()
    ]
    assert [m.snapshot_id for m in metrics] == snapshots
    stored = spark.sql(
        "select status, expected, actual from dq.check_results where run_id = :r order by check",
        args={"r": second.run_id},
    ).collect()
    assert sorted(r.status for r in stored) == ["fail", "pass", "pass"]


def test_suggestions_parse_and_pass_on_the_profiled_table(spark, lakehouse):
    rows = [
        (
            i,
            ["new", "paid", "shipped"][i % 3],
            i * 2.5,
            None if i % 10 == 0 else f"u{i}@x.io",
            str(i),
        )
        for i in range(60)
    ]
    spark.createDataFrame(
        rows, "id long, status string, amount double, email string, code string"
    ).writeTo("marts.fct_orders").using("iceberg").create()
    result = CliRunner().invoke(dq, ["suggest", "fct_orders"])
    assert result.exit_code == 0, result.output
    doc = yaml.safe_load(result.output)
    checks = _checks_from_yaml(doc)
    texts = {c.get("check") for c in checks}
    assert {
        "size > 0",
        "is_complete(id)",
        "is_unique(id)",
        "is_contained_in(status, ['new', 'paid', 'shipped'])",
        "is_non_negative(amount)",
        "completeness(email) >= 0.9",
        "has_data_type(code, integral)",
    } <= texts
    assert "is_unique(status)" not in texts
    outcome = verify(spark, "marts.fct_orders", checks, store=False)
    assert [r.message for r in outcome.results if r.status == "fail"] == []

    # Same from the Python API, and the YAML header is a comment.
    checks2, prof = suggest_checks(spark.table("marts.fct_orders"))
    assert prof.row_count == 60 and prof.columns["code"].data_type == "Integral"
    assert suggestion_yaml("marts.fct_orders", checks2, prof).startswith("# floe dq suggest")


def test_migration_validation_reports_exactly_the_planted_differences(spark, lakehouse, tmp_path):
    source = spark.createDataFrame(
        [
            (
                i,
                f"buyer{i % 7}",
                10.5 + i,
                ["music", "sports"][i % 2],
                f"2024-01-{1 + i % 28:02d}",
                i,
            )
            for i in range(50)
        ],
        "sale_id long, buyer string, price double, category string, sold_on string, qty int",
    ).withColumn("sold_on", F.to_date("sold_on"))
    source.writeTo("raw.tbl_sales").using("iceberg").create()
    # The "migrated" copy, landed as CSV, with three planted differences:
    spark.sql(
        """
        select
            sale_id,
            case when sale_id = 3 then null else buyer end as buyer,  -- completeness
            case when sale_id = 4 then 'n/a' else cast(price as string) end as price,  -- type
            category,
            sold_on
        from raw.tbl_sales  -- qty dropped
        """
    ).coalesce(1).write.option("header", "true").csv(str(tmp_path / "tbl_sales"))

    result = CliRunner().invoke(
        dq, ["compare", "raw.tbl_sales", str(tmp_path / "tbl_sales"), "--format", "csv"]
    )
    assert result.exit_code == 1, result.output  # differences -> non-zero exit
    lines = result.output.splitlines()
    assert lines[0].split("\t") == [
        "table_name",
        "source rows",
        "target rows",
        "total columns",
        "matching columns",
        "non-matching columns",
    ]
    assert lines[1].split("\t") == ["tbl_sales", "50", "50", "6", "3", "3"]

    stored = {
        r.col_name: r for r in spark.sql("select * from dq.migration_validation_result").collect()
    }
    assert {c for c, r in stored.items() if r.status == "Match"} == {
        "sale_id",
        "category",
        "sold_on",
    }
    assert stored["buyer"].src_completeness == 1.0 and stored["buyer"].tgt_completeness == 0.98
    assert (stored["price"].src_datatype, stored["price"].tgt_datatype) == ("Fractional", "String")
    assert stored["qty"].tgt_datatype is None
    assert (stored["sale_id"].src_datatype, stored["sale_id"].tgt_datatype) == ("Integral",) * 2
    # HyperLogLog over the values as text: a bigint and its CSV text get the same sketch.
    sale_id = stored["sale_id"]
    assert sale_id.src_approx_distinct_values == sale_id.tgt_approx_distinct_values > 45

    # A target that lost a row: every column is No Match (row counts are compared).
    short = spark.table("raw.tbl_sales").where("sale_id <> 7")
    rows = validate_migration(
        spark, spark.table("raw.tbl_sales"), short, table_name="t", store=False
    )
    assert summary(rows)["matching columns"] == 0
    assert load(spark, "raw.tbl_sales").count() == 50
