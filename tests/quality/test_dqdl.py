"""DQDL rulesets on real Iceberg tables: each reference example passes on good data and
fails on bad, in one shared pass, with results equal to floe's own checks."""

from __future__ import annotations

import datetime as dt

import pytest
from pyspark.sql import functions as F

from floe.quality.dqdl import DqdlUnsupportedError, explain, verify_ruleset
from floe.quality.verification import verify

pytestmark = pytest.mark.integration

SCHEMA = (
    "order_id bigint, customer_id bigint, email string, country string, first_name string, "
    "age int, star_rating double, order_total double, height double, weight double, "
    "load_date timestamp, postal_code string, amount string, discount double"
)

# The reference's examples on one orders table: (rule, passes on GOOD, passes on BAD).
EXAMPLES = [
    ("RowCount between 3 and 10", True, False),
    ('RowCount between 1 and 4 where "order_id > 2"', True, False),
    ('IsComplete "email"', True, False),
    ('Completeness "email" > 0.95', True, False),
    ('Completeness "email" > 0.95 where "order_id > 3"', True, True),
    ('IsUnique "order_id"', True, False),
    ('Uniqueness "order_id" = 1.0', True, False),
    ('UniqueValueRatio "order_id" = 1.0', True, False),
    ('IsPrimaryKey "order_id"', True, False),
    ('IsPrimaryKey "order_id" "customer_id"', True, False),
    ('ColumnValues "country" in [ "US", "CA", "UK" ]', True, False),
    ('ColumnValues "country" in [ "US", "CA", "UK", "FR" ]', True, True),
    ('ColumnValues "first_name" matches "[a-zA-Z]*"', True, False),
    ('ColumnValues "load_date" > (now() - 3 days)', True, False),
    ('ColumnValues "customer_id" between 0 and 2000', True, False),
    ('ColumnValues "age" not in [16, 17, 18, NULL]', True, False),
    ('ColumnValues "age" > 21 with threshold > 0.8', True, False),
    ('ColumnLength "postal_code" = 5', True, False),
    ('ColumnLength "first_name" between 1 and 12', True, False),
    ("ColumnCount = 14", True, False),
    ('ColumnExists "discount"', True, False),
    ('ColumnNamesMatchPattern "[a-z_]+"', True, False),
    ('ColumnDataType "amount" = "INTEGER"', True, False),
    ('ColumnDataType "amount" = "INTEGER" with threshold > 0.5', True, True),
    ('DistinctValuesCount "country" > 2', True, False),
    ('Entropy "country" > 1', True, False),
    ('Mean "star_rating" > 3', True, False),
    ('Sum "order_total" > 1000', True, False),
    ('StandardDeviation "star_rating" < 1.5', True, False),
    ('ColumnCorrelation "height" "weight" > 0.8', True, False),
    ('DataFreshness "load_date" <= 24 hours', True, False),
    ('CustomSql "select count(*) from primary" between 3 and 10', True, False),
    ('CustomSql "select order_id from primary where order_total > 100"', True, False),
    ('ReferentialIntegrity "country" "countries.code" = 1.0', True, False),
    ('DatasetMatch "orders" "order_id" "email" >= 0.9', True, False),
    ('AggregateMatch "sum(order_total)" "sum(orders.order_total)" >= 0.9', True, False),
    ('SchemaMatch "orders" = 1.0', True, False),
    ('RowCountMatch "orders" = 1.0', True, False),
    ('(IsComplete "email") and (IsUnique "order_id")', True, False),
    ('(RowCount > 100) or (IsPrimaryKey "order_id")', True, False),
    (
        '(Mean "star_rating" > 3) and ((Mean "order_total" > 500) or (IsComplete "email"))',
        True,
        False,
    ),
]


def _good(now: dt.datetime) -> list[tuple]:
    fresh = now - dt.timedelta(hours=1)
    countries = ["US", "CA", "UK", "US", "CA"]
    return [
        (
            i,
            100 + i,
            f"u{i}@example.com",
            countries[i - 1],
            name,
            25 + i,
            rating,
            600.0 + 100 * i,
            150.0 + 5 * i,
            50.0 + 4 * i + (i % 2),
            fresh,
            "1234" + str(i),
            str(10 * i),
            0.1,
        )
        for i, name, rating in zip(
            range(1, 6), ["Ann", "Bob", "Cy", "Dee", "Ed"], [4.0, 4.0, 5.0, 3.5, 4.5], strict=True
        )
    ]


def _bad(now: dt.datetime) -> list[tuple]:
    stale = now - dt.timedelta(days=10)
    rows = []
    for i in range(1, 12):
        rows.append(
            (
                1 if i <= 2 else i,  # a duplicate order id
                None if i == 3 else 3000 + i,  # a NULL customer, ids beyond 2000
                None if i % 2 and i < 4 else f"x{i}@example.com",
                "FR",
                "J0hn" if i == 1 else "A" * 20,
                18 if i <= 8 else None,
                1.0 if i % 2 else 5.0,
                900.0 if i == 4 else 10.0,
                float(i),
                float((i * 7) % 5),
                stale,
                "123",
                "abc" if i <= 3 else str(i),
                "x",
                "y",
            )
        )
    return rows


@pytest.fixture
def orders(spark, lakehouse):
    now = dt.datetime.now()
    spark.createDataFrame(_good(now), SCHEMA).writeTo("marts.dqdl_good").create()
    bad_schema = SCHEMA.replace("discount double", "BadName string, extra string")
    spark.createDataFrame(_bad(now), bad_schema).writeTo("marts.dqdl_bad").create()
    spark.createDataFrame([("US",), ("CA",), ("UK",)], "code string").writeTo(
        "marts.dqdl_countries"
    ).create()
    return {"countries": "marts.dqdl_countries", "orders": "marts.dqdl_good"}


def _ruleset(rules: list[str]) -> str:
    return "Rules = [\n    " + ",\n    ".join(rules) + "\n]"


def test_reference_examples_pass_on_good_data_and_fail_on_bad(spark, orders):
    ruleset = _ruleset([rule for rule, _, _ in EXAMPLES])
    good = verify_ruleset(spark, "marts.dqdl_good", ruleset, datasets=orders)
    bad = verify_ruleset(spark, "marts.dqdl_bad", ruleset, datasets=orders)
    mismatches = [
        (rule, good.status(rule), bad.status(rule))
        for rule, on_good, on_bad in EXAMPLES
        if (good.status(rule) == "pass") != on_good or (bad.status(rule) == "pass") != on_bad
    ]
    assert mismatches == []
    # one row per rule, with its DQDL text, in the same dq.check_results as floe_checks
    recorded = spark.sql(
        "select check, status from dq.check_results where table_name = 'marts.dqdl_bad'"
    ).collect()
    assert {r.check for r in recorded} == {rule for rule, _, _ in EXAMPLES}
    failed = next(r for r in bad.results if r.check == 'IsComplete "email"')
    assert "completeness(email)" in failed.message and "actual 0.818182" in failed.message


def test_rules_share_one_pass_per_table(spark, orders):
    ruleset = _ruleset(
        [
            "RowCount > 0",
            'IsComplete "email"',
            'Completeness "country" > 0.5 where "order_id > 1"',
            'ColumnValues "country" in ["US", "CA", "UK"]',
            'ColumnLength "postal_code" = 5',
            'Mean "star_rating" > 3',
            'ColumnCorrelation "height" "weight" > 0.8',
            'ColumnDataType "amount" = "INTEGER"',
            'IsUnique "order_id"',
            'Uniqueness "order_id" > 0.9',
            'Entropy "country" > 1',
            'DistinctValuesCount "country" > 2',
        ]
    )
    the_plan, physical = explain(spark, "marts.dqdl_good", ruleset)
    # One aggregation for every scan rule, one groupBy per column set (order_id, country).
    assert len(the_plan.scan) == 8 and not the_plan.sketch
    assert sorted(the_plan.grouping) == [("country",), ("order_id",)]
    assert the_plan.passes == 3
    assert physical.count("BatchScan") == 1 and "HashAggregate" in physical


def test_results_equal_floe_checks_on_the_same_data(spark, orders):
    pairs = [
        ('Completeness "email" > 0.95', "completeness(email) > 0.95"),
        ('IsUnique "order_id"', "is_unique(order_id)"),
        ('Mean "star_rating" > 3', "mean(star_rating) > 3"),
        ('Sum "order_total" > 1000', "sum(order_total) > 1000"),
        ('StandardDeviation "star_rating" < 1.5', "standard_deviation(star_rating) < 1.5"),
        ('Entropy "country" > 1', "entropy(country) > 1"),
        ('DistinctValuesCount "country" > 2', "count_distinct(country) > 2"),
        ('ColumnCorrelation "height" "weight" > 0.8', "correlation(height, weight) > 0.8"),
        ('RowCount > 3 where "order_id > 1"', {"check": "size > 3", "where": "order_id > 1"}),
        ('ColumnValues "first_name" matches "[a-zA-Z]*"', "has_pattern(first_name, '^[a-zA-Z]*$')"),
    ]
    for table in ("marts.dqdl_good", "marts.dqdl_bad"):
        dqdl = verify_ruleset(spark, table, _ruleset([d for d, _ in pairs]), store=False)
        floe = verify(spark, table, [c for _, c in pairs], store=False)
        assert [r.status for r in dqdl.results] == [r.status for r in floe.results], table
        assert [r.actual for r in dqdl.results][:-1] == pytest.approx(
            [r.actual for r in floe.results][:-1]
        )


def test_dynamic_rules_and_anomalies_read_the_models_history(spark, lakehouse):
    spark.sql("create table marts.dqdl_growing (id bigint) using iceberg")
    ruleset = 'Rules = [ RowCount >= avg(last(3)) * 0.5, DetectAnomalies "RowCount" ]'
    statuses = []
    for size in (10, 10, 12, 11, 1):
        spark.range(size).writeTo("marts.dqdl_growing").overwrite(F.lit(True))
        result = verify_ruleset(spark, "marts.dqdl_growing", ruleset, model="dqdl_growing")
        statuses.append([r.status for r in result.results])
    # first run: no history (skip); anomalies need three past values
    assert statuses[0] == ["skip", "skip"]
    assert statuses[1] == ["pass", "skip"]
    assert statuses[3] == ["pass", "pass"]
    assert statuses[4] == ["fail", "fail"]  # 1 row against ~11


def test_unchanged_table_records_nothing_the_second_time(spark, orders):
    ruleset = _ruleset(['IsComplete "email"', "ColumnCount = 14", 'Entropy "country" > 1'])
    ruleset += '\nAnalyzers = [ Completeness "discount", Mean "age" ]'

    verify_ruleset(spark, "marts.dqdl_good", ruleset, model="dqdl_good")
    rows = spark.sql("select count(*) from dq.metrics").first()[0]
    again = verify_ruleset(spark, "marts.dqdl_good", ruleset, model="dqdl_good")
    assert not again.errors and len(again.results) == 3  # analyzers are measured, not judged
    assert {m.name for m in again.metrics} >= {"completeness", "mean"}
    assert spark.sql("select count(*) from dq.metrics").first()[0] == rows


def test_a_missing_column_or_alias_is_a_clear_error(spark, orders):
    with pytest.raises(Exception, match="no column 'nope'"):
        verify_ruleset(spark, "marts.dqdl_good", 'Rules = [ IsComplete "nope" ]', store=False)
    with pytest.raises(DqdlUnsupportedError, match="alias 'ref' is not declared"):
        verify_ruleset(spark, "marts.dqdl_good", 'Rules = [ SchemaMatch "ref" = 1.0 ]', store=False)
