"""floe_value_literal in real Spark: landed values come back unchanged and still prune scans."""

from __future__ import annotations

import pytest

from tests.unit.macros.jinja_harness import Renderer

VALUES = ["a'b", "z\\", "\\'; drop table t; --", "naïve ☃", "line\nbreak", "", "42"]


@pytest.mark.parametrize("escaped", ["false", "true"])
def test_values_read_back_unchanged_whatever_the_escape_setting(spark, escaped):
    render = Renderer()
    literals = [render.sql("floe_value_literal", v, "string") for v in VALUES]
    spark.conf.set("spark.sql.parser.escapedStringLiterals", escaped)
    try:
        row = spark.sql("select " + ", ".join(literals)).collect()[0]
    finally:
        spark.conf.unset("spark.sql.parser.escapedStringLiterals")
    assert list(row) == VALUES
    assert spark.sql(f"select {render.sql('floe_value_literal', '-7', 'bigint')}").first()[0] == -7


def test_the_cast_literals_are_pushed_into_the_iceberg_scan(spark, lakehouse):
    spark.sql("create table marts.value_lits (k bigint, s string) using iceberg")
    rows = [(1, "a'b"), (5, "x"), (9, "y")]
    spark.createDataFrame(rows, "k bigint, s string").writeTo("marts.value_lits").append()
    render = Renderer()
    lo, hi = (render.sql("floe_value_literal", v, "bigint") for v in ("2", "9"))
    quoted = render.sql("floe_value_literal", "a'b", "string")
    sql = f"select k from marts.value_lits where k between {lo} and {hi} and s in ({quoted}, 'x')"
    plan = spark.sql("explain " + sql).collect()[0][0]
    scan = next(line for line in plan.splitlines() if "BatchScan" in line)
    assert "k >= 2" in scan and "k <= 9" in scan and "s IN" in scan, scan
    assert [r[0] for r in spark.sql(sql).collect()] == [5]
    both = f"select k from marts.value_lits where s in ({quoted}) order by k"
    assert [r[0] for r in spark.sql(both).collect()] == [1]
