"""Analyzers against hand-computed values (NULLs, empty tables, all-NULL columns), one pass."""

from __future__ import annotations

import math
import re

import pytest
from pyspark.sql import functions as F

from floe.quality.analyzers import (
    AnalyzerError,
    ApproxCountDistinct,
    ApproxQuantile,
    Completeness,
    Compliance,
    ContainedIn,
    DataType,
    Distinctness,
    Maximum,
    MaxLength,
    Mean,
    Minimum,
    PatternMatch,
    Size,
    StandardDeviation,
    Sum,
    Uniqueness,
    UniqueValueRatio,
    compute_metrics,
    infer_type,
    plan,
    scan_frame,
)
from tests.helpers import executed_plans, last_execution_id, spark_jobs

pytestmark = pytest.mark.integration

SCHEMA = "id int, name string, amount double, country string, code string, empty string"
ROWS = [
    (1, "ann", 10.0, "US", "12", None),
    (2, "bob", 20.0, "DE", "3.5", None),
    (3, None, None, "US", "x", None),
    (4, "dan", -5.0, "FR", None, None),
    (4, "eve", 15.0, None, "true", None),
]


@pytest.fixture(scope="module")
def df(spark):
    return spark.createDataFrame(ROWS, SCHEMA)


def values(df, analyzers):
    return [m.value for m in compute_metrics(df, analyzers)]


def test_scan_analyzers_match_hand_computed(df):
    got = values(
        df,
        [
            Size(),
            Completeness(("name",)),
            Completeness(("empty",)),
            ApproxCountDistinct(("country",)),
            Minimum(("amount",)),
            Maximum(("amount",)),
            Mean(("amount",)),
            Sum(("amount",)),
            StandardDeviation(("amount",)),
            ApproxQuantile(("amount",), quantile=0.5),
            MaxLength(("name",)),
            PatternMatch(("name",), pattern="^[a-d]"),
            Compliance(predicate="amount > 0"),
            ContainedIn(("country",), allowed=("US", "DE")),
            DataType(("code",), value_kind="integral"),
            DataType(("code",), value_kind="fractional"),
            DataType(("code",), value_kind="boolean"),
            DataType(("code",), value_kind="string"),
            DataType(("id",), value_kind="integral"),
        ],
    )
    amounts = [10.0, 20.0, -5.0, 15.0]
    mean = sum(amounts) / 4
    pstdev = math.sqrt(sum((a - mean) ** 2 for a in amounts) / 4)
    expected = [
        5.0,
        4 / 5,
        0.0,  # all-NULL column: complete share 0
        3.0,
        -5.0,
        20.0,
        mean,
        40.0,
        pstdev,
        10.0,  # approx median of (-5, 10, 15, 20): lower middle
        3.0,
        3 / 4,  # ann, bob, dan start with a-d, eve does not; the NULL name is excluded
        3 / 5,  # NULL amount is not compliant (Deequ)
        3 / 4,  # NULL country excluded, FR not allowed
        1 / 4,
        1 / 4,
        1 / 4,
        1 / 4,
        1.0,
    ]
    assert got == pytest.approx(expected)


def test_filters_fold_into_the_same_pass(df):
    got = values(
        df,
        [
            Size(where="country = 'US'"),
            Completeness(("name",), where="country = 'US'"),
            Sum(("amount",), where="id <= 2"),
            Uniqueness(("id",), where="id >= 3"),
        ],
    )
    assert got == pytest.approx([2.0, 0.5, 30.0, 1 / 3])


def test_grouping_analyzers(df):
    got = values(
        df,
        [
            Uniqueness(("id",)),
            Distinctness(("id",)),
            UniqueValueRatio(("id",)),
            Uniqueness(("id", "country")),
            Uniqueness(("country",)),
        ],
    )
    # id: 1,2,3,4,4 -> 3 singletons over 5 rows; 4 distinct; 3 of 4 distinct are unique.
    # (id, country): all 5 pairs distinct. country: US,DE,US,FR,NULL -> rows with a value 4,
    # singletons DE, FR.
    assert got == pytest.approx([3 / 5, 4 / 5, 3 / 4, 1.0, 2 / 4])


def test_empty_table_and_all_null_columns(spark):
    empty = spark.createDataFrame([], SCHEMA)
    got = values(
        empty,
        [
            Size(),
            Completeness(("name",)),
            Mean(("amount",)),
            Uniqueness(("id",)),
            Compliance(predicate="amount > 0"),
            ApproxCountDistinct(("name",)),
        ],
    )
    assert got == [0.0, None, None, None, None, 0.0]
    nulls = spark.createDataFrame([(None,), (None,)], "x double")
    assert values(nulls, [Completeness(("x",)), Maximum(("x",)), Uniqueness(("x",))]) == [
        0.0,
        None,
        None,
    ]


def test_bad_declarations_are_rejected_with_a_clear_message(df):
    with pytest.raises(AnalyzerError, match="no column 'nope'"):
        compute_metrics(df, [Completeness(("nope",))])
    with pytest.raises(AnalyzerError, match="kind"):
        DataType(("code",), value_kind="number")
    with pytest.raises(AnalyzerError, match="quantile"):
        ApproxQuantile(("amount",), quantile=2.0)


def test_plan_is_one_scan_plus_one_grouping_per_column_set():
    p = plan(
        [
            Size(),
            Completeness(("a",)),
            Uniqueness(("a",)),
            Distinctness(("a",), where="b > 0"),
            Uniqueness(("a", "b")),
            ApproxQuantile(("a",), quantile=0.5),
            ApproxCountDistinct(("b",)),
            Size(),  # duplicates are computed once
        ]
    )
    assert len(p.scan) == 2
    assert len(p.sketch) == 2
    assert sorted(p.grouping) == [("a",), ("a", "b")]
    assert p.passes == 4  # the scan aggregation, the sketches' query, one groupBy per set
    two_quantiles = plan([ApproxQuantile(("a",), quantile=q) for q in (0.1, 0.9)])
    assert two_quantiles.passes == 1  # one histogram of `a` answers both


SCAN_ONLY = [
    Size(),
    Completeness(("name",)),
    Mean(("amount",)),
    Maximum(("amount",)),
    PatternMatch(("name",), pattern="a"),
    ContainedIn(("country",), allowed=("US",)),
    DataType(("code",), value_kind="integral"),
    Sum(("amount",), where="id > 1"),
    Completeness(("code",), where="country = 'US'"),
]


SKETCHES = [
    ApproxCountDistinct(("country",)),
    ApproxCountDistinct(("id",)),
    *(ApproxQuantile(("amount",), quantile=q) for q in (0.1, 0.5, 0.9)),
]


def test_one_pass_plan_scans_the_iceberg_table_once(spark, lakehouse):
    spark.createDataFrame(ROWS, SCHEMA).writeTo("dq.one_pass_probe").using("iceberg").create()
    table = spark.table("dq.one_pass_probe")
    frame, _ = scan_frame(table, SCAN_ONLY)
    physical = frame._jdf.queryExecution().executedPlan().toString()
    assert physical.count("BatchScan") == 1, physical
    # Partial + final aggregate of ONE aggregation, whatever the number of analyzers.
    assert physical.count("HashAggregate") + physical.count("ObjectHashAggregate") == 2

    # Spark jobs: nine filtered analyzers cost what one aggregate costs ...
    baseline = spark_jobs(spark, lambda: table.agg(F.sum("amount")).collect())
    assert spark_jobs(spark, lambda: compute_metrics(table, SCAN_ONLY)) == baseline
    # ... sketches ride on the scan aggregation (floe's jar: no query of their own) or,
    # as groupBys, add one query whatever their number: a union of one groupBy per
    # column (three quantiles of amount share one histogram) ...
    since = last_execution_id(spark)
    ridden = compute_metrics(table, [*SCAN_ONLY, *SKETCHES])
    assert len(executed_plans(spark, since)) == 1
    since = last_execution_id(spark)
    grouped = compute_metrics(table, [*SCAN_ONLY, *SKETCHES], ride=False)
    assert len(executed_plans(spark, since)) == 2
    assert [m.value for m in ridden] == [m.value for m in grouped]
    group_jobs = spark_jobs(spark, lambda: compute_metrics(table, [Uniqueness(("id",))]))
    # ... and a uniqueness column set adds one grouping, not one query per analyzer.
    grouped = [*SCAN_ONLY, Uniqueness(("id",)), Distinctness(("id",)), UniqueValueRatio(("id",))]
    assert spark_jobs(spark, lambda: compute_metrics(table, grouped)) == baseline + group_jobs


def test_sketches_are_code_generated_groupbys_over_their_column_alone(spark, lakehouse):
    from floe.quality.analyzers import _sketch_frame

    spark.createDataFrame(ROWS, SCHEMA).writeTo("dq.sketch_probe").using("iceberg").create()
    table = spark.table("dq.sketch_probe")
    for analyzer in SKETCHES:
        frame = _sketch_frame(table, analyzer.sketch())
        frame.collect()
        physical = frame._jdf.queryExecution().executedPlan().toString()
        physical = physical.split("== Initial Plan ==")[0]
        # Every aggregate code-generated (an imperative one would be a plain or an
        # Object HashAggregate), and the scan reads the sketch's column only.
        aggregates = _aggregates(physical)
        assert aggregates and all(c and n == "HashAggregate" for c, n in aggregates), physical
        scans = re.findall(r"BatchScan \S+\[([^\]]*)\]", physical)
        assert [re.sub(r"#\d+L?", "", c) for c in scans] == list(analyzer.columns), physical
    together = compute_metrics(table, [*SCAN_ONLY, *SKETCHES])
    alone = [compute_metrics(table, [a])[0].value for a in [*SCAN_ONLY, *SKETCHES]]
    assert [m.value for m in together] == pytest.approx(alone)


def test_infer_type_follows_deequ_precedence():
    assert infer_type({"integral": 1.0}) == "Integral"
    assert infer_type({"integral": 0.5, "fractional": 0.5}) == "Fractional"
    assert infer_type({"integral": 0.9, "string": 0.1}) == "String"
    assert infer_type({"boolean": 1.0}) == "Boolean"
    assert infer_type({}) == "Unknown"


# Values on either side of the `data_type` shortcuts (canonical integers, true/false
# spellings) and of the regular expressions that define the kinds.
KIND_EDGES = [
    "0", "7", "-12", "123456789012", "9223372036854775807", "-9223372036854775808",
    "9223372036854775808", "-0", "+5", "007", " 12", "12 ", "\t12", "12\n", "12\u2028",
    "1.5", "1.", "-.5", "1e5", "1E+5", "3.50", "NaN", "Infinity", "-Infinity",
    "true", "TRUE", "True", "tRuE", " true", "false ", "FALSE", "yes", "", "  ",
    "\u0661\u0662", "12a", "a12", "1_000", "0x1F", "1,000", None,
]  # fmt: skip


def _regex_only_kind(value):
    from floe.quality.analyzers import _FRACTIONAL_RE, _INTEGRAL_RE

    return (
        F.when(value.isNull(), F.lit(None))
        .when(value.rlike(_INTEGRAL_RE), F.lit("integral"))
        .when(value.rlike(_FRACTIONAL_RE), F.lit("fractional"))
        .when(F.lower(F.trim(value)).isin("true", "false"), F.lit("boolean"))
        .otherwise(F.lit("string"))
    )


@pytest.mark.parametrize("ansi", ["false", "true"])
def test_data_type_shortcuts_classify_like_the_regular_expressions(spark, ansi):
    from floe.quality.analyzers import value_kind

    previous = spark.conf.get("spark.sql.ansi.enabled")
    spark.conf.set("spark.sql.ansi.enabled", ansi)
    try:
        frame = spark.createDataFrame([(v,) for v in KIND_EDGES], "v string")
        rows = frame.select(
            "v", value_kind(frame, "v").alias("got"), _regex_only_kind(frame["v"]).alias("want")
        ).collect()
    finally:
        spark.conf.set("spark.sql.ansi.enabled", previous)
    assert [(r.v, r.got) for r in rows] == [(r.v, r.want) for r in rows]
    kinds = {r.v: r.got for r in rows}
    assert (kinds["-12"], kinds["+5"], kinds["12\u2028"], kinds["1.5"]) == (
        "integral",
        "integral",
        "integral",  # Java's `$` matches before a final line terminator
        "fractional",
    )
    assert (kinds["True"], kinds[" true"], kinds["NaN"], kinds["\u0661\u0662"]) == (
        "boolean",
        "boolean",
        "string",
        "string",
    )


def _aggregates(physical: str) -> list[tuple[str, str]]:
    return re.findall(r"([*]\(\d+\) )?(\w*HashAggregate)", physical)


def test_bench_mix_plans_a_code_generated_scan_and_a_narrow_sketch_aggregation(spark, lakehouse):
    """The plan bench/bench_dq.py's figures rely on: the scan analyzers (regexes, data
    types, filters, compliance) in ONE aggregation fused with the table scan by
    whole-stage code generation, each sketch a code-generated groupBy of its column."""
    from floe.quality.analyzers import _sketch_frame
    from floe.quality.checks import parse_checks

    spark.sql(
        "CREATE TABLE dq.plan_probe (id bigint, customer_id bigint, amount double, "
        "quantity int, country string, status string, email string, code string) USING iceberg"
    )
    spark.sql(
        "INSERT INTO dq.plan_probe VALUES (1, 1, 2.5, 3, 'US', 'new', 'u1@x.io', '12'), "
        "(2, 1, NULL, 0, 'DE', 'paid', NULL, 'x')"
    )
    table = spark.table("dq.plan_probe")
    checks = parse_checks(
        [
            "size > 0",
            "is_complete(id)",
            "is_contained_in(country, ['US', 'DE'])",
            "0 <= mean(amount) <= 1000",
            "standard_deviation(amount) < 1000",
            "sum(quantity) > 0",
            r"has_pattern(email, '^u[0-9]+@x[.]io$')",
            "max_length(email) <= 64",
            "has_data_type(code, integral)",
            "compliance('quantity * amount >= 0') == 1",
            {"check": "completeness(status) >= 0.99", "where": "country = 'US'"},
            "approx_count_distinct(customer_id) >= 1",
            "0 <= approx_quantile(amount, 0.5) <= 1000",
        ]
    )
    the_plan = plan([c.analyzer for c in checks])
    assert len(the_plan.scan) == 11 and len(the_plan.sketch) == 2

    frame, _ = scan_frame(table, the_plan.scan)
    frame.collect()
    physical = frame._jdf.queryExecution().executedPlan().toString().split("== Initial Plan ==")[0]
    assert physical.count("BatchScan") == 1, physical
    assert _aggregates(physical) == [("*(2) ", "HashAggregate"), ("*(1) ", "HashAggregate")], (
        physical
    )
    # The scan (columnar batches) feeds the code-generated partial aggregate directly.
    assert re.search(r"\*\(1\) HashAggregate[^\n]*\n\s*\+- \*\(1\) ColumnarToRow", physical), (
        physical
    )

    # The sketches: one code-generated groupBy each, reading only its column.
    for sketch in the_plan.sketches:
        frame = _sketch_frame(table, sketch)
        frame.collect()
        physical = frame._jdf.queryExecution().executedPlan().toString()
        physical = physical.split("== Initial Plan ==")[0]
        assert all(codegen for codegen, _ in _aggregates(physical)), physical
        scans = re.findall(r"BatchScan \S+\[([^\]]*)\]", physical)
        assert [re.sub(r"#\d+L?", "", c) for c in scans] == [sketch.column], physical


def test_data_types_of_one_column_share_one_classification_per_row(df):
    """A profile asks all four kinds of a column: the regular expressions run once per row
    (in a projection under the aggregate), not once per kind."""
    kinds = [
        DataType(("code",), value_kind=k) for k in ("integral", "fractional", "boolean", "string")
    ]
    frame, _ = scan_frame(df, kinds)
    physical = frame._jdf.queryExecution().executedPlan().toString()
    # the integral and the fractional pattern, each once (floe's byte matcher, ADR 0061)
    assert physical.count("ByteRegex(") == 2, physical
    assert [m.value for m in compute_metrics(df, kinds)] == pytest.approx([0.25] * 4)


def test_concurrent_passes_give_the_values_of_passes_in_turn(spark, df):
    """The scan aggregation (the sketches riding on it, or as their own query without
    floe's jar) and the groupings run as concurrent Spark jobs by default: the same
    values as one after the other, and a caller's job group still names every job (the
    threads inherit the Spark local properties)."""
    analyzers = [*SCAN_ONLY, *SKETCHES, Uniqueness(("id",)), Distinctness(("country",))]
    assert plan(analyzers).passes == 4
    in_turn = [m.value for m in compute_metrics(df, analyzers, concurrent=False)]
    at_once = [m.value for m in compute_metrics(df, analyzers)]
    assert at_once == in_turn
    assert None not in at_once
    jobs_in_turn = spark_jobs(spark, lambda: compute_metrics(df, analyzers, concurrent=False))
    assert jobs_in_turn > 0
    assert spark_jobs(spark, lambda: compute_metrics(df, analyzers)) == jobs_in_turn


@pytest.mark.parametrize(
    "bad",
    [
        Compliance(predicate="no_such_column > 0"),  # the scan pass, in the caller's thread
        ApproxQuantile(("amount",), where="no_such_column > 0"),  # the sketches, on a pass thread
        Uniqueness(("id",), where="no_such_column > 0"),  # a grouping, on a pass thread
    ],
)
def test_a_failing_pass_fails_the_run_after_the_others_ended(df, bad):
    """A pass that fails raises its own error in the caller, not a partial result."""
    from pyspark.errors import AnalysisException

    analyzers = [*SCAN_ONLY, *SKETCHES, Distinctness(("country",)), bad]
    assert plan(analyzers).passes >= 3
    with pytest.raises(AnalysisException, match="no_such_column"):
        compute_metrics(df, analyzers)
