"""Migration validation (`floe dq compare`) finds exactly the planted differences."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from pyspark.sql import functions as F

from floe.quality.cli import dq
from floe.quality.migration import load, summary, validate_migration

pytestmark = pytest.mark.integration


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
