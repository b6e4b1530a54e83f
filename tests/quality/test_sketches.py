"""The sketch analyzers against Spark's own functions and exact answers.

approx_count_distinct must equal Spark's `approx_count_distinct` to the unit (same
HyperLogLog++ registers, Spark's own estimator); approx_quantile must answer within the
rank error `percentile_approx` promises (n / accuracy ranks of the exact quantile), on
spread values, heavy duplicates, dense clusters (the refining path), signs, zeros,
infinities and NaN.
"""

from __future__ import annotations

import base64
import bisect
import math
import random
import struct

import pytest
from pyspark.sql import functions as F

from floe.quality import analyzers as A
from floe.quality.analyzers import ApproxCountDistinct, ApproxQuantile, compute_metrics
from tests.helpers import spark_jobs

pytestmark = pytest.mark.integration


def _distinct(df, column, where=None):
    return compute_metrics(df, [ApproxCountDistinct((column,), where=where)])[0].value


def _spark_distinct(df, column, where=None):
    value = F.col(column) if where is None else F.when(F.expr(where), F.col(column))
    return float(df.agg(F.approx_count_distinct(value)).first()[0])


@pytest.mark.parametrize("rows", [0, 1, 7, 300, 5000, 60000])
def test_distinct_equals_sparks_own_estimate_across_its_ranges(spark, rows):
    """Linear counting (few values), the bias-corrected range and plain HyperLogLog."""
    df = spark.range(rows).selectExpr(
        "id",
        "cast(id * 7919 % 100003 as bigint) as n",
        "concat('k', id % 997) as s",
        "id / 3.0d as d",
        "cast(id % 40 as decimal(10, 2)) as dec",
        "date_add(date'2020-01-01', cast(id % 500 as int)) as day",
        "id % 2 = 0 as flag",
    )
    for column in ("id", "n", "s", "d", "dec", "day", "flag"):
        assert _distinct(df, column) == _spark_distinct(df, column), column
    assert _distinct(df, "n", "id % 3 = 0") == _spark_distinct(df, "n", "id % 3 = 0")


def test_many_distinct_columns_at_once_give_the_same_values(spark):
    """A profile counts every column: past MAX_REGISTER_GROUPBYS they go through Spark's
    function in one aggregation, with the values the register groupBys give."""
    df = spark.range(3000).selectExpr(
        *[f"cast(id * {k} % 211 as string) as c{k}" for k in range(1, 8)]
    )
    assert len(df.columns) > A.MAX_REGISTER_GROUPBYS
    together = compute_metrics(df, [ApproxCountDistinct((c,)) for c in df.columns])
    alone = [_distinct(df, c) for c in df.columns]
    assert [m.value for m in together] == alone == [_spark_distinct(df, c) for c in df.columns]


def test_distinct_normalizes_floating_values_as_spark_does(spark):
    values = [0.0, -0.0, float("nan"), float("inf"), float("-inf"), 1.5, None, 1.5]
    df = spark.createDataFrame([(v,) for v in values], "x double")
    floats = spark.createDataFrame([(v,) for v in values], "x float")
    assert _distinct(df, "x") == _spark_distinct(df, "x") == 5.0
    assert _distinct(floats, "x") == _spark_distinct(floats, "x") == 5.0


def test_estimate_of_no_registers_is_zero(spark):
    assert A.hll_estimate(spark, {}) == 0
    assert _distinct(spark.createDataFrame([(None,)], "x string"), "x") == 0.0


def _rank_error(sorted_values, answer, q):
    """How many ranks `answer` is from rank ceil(q * n), the smallest if it repeats."""
    n = len(sorted_values)
    target = max(1, math.ceil(q * n))
    if answer is None or (isinstance(answer, float) and math.isnan(answer)):
        first = bisect.bisect_left(sorted_values, math.inf)  # NaN is last: after +inf
        last = n
    else:
        first = bisect.bisect_left(sorted_values, answer) + 1
        last = bisect.bisect_right(sorted_values, answer)
    if first <= target <= last:
        return 0
    return min(abs(target - first), abs(target - last))


QS = (0.0, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 1.0)


def _datasets():
    rnd = random.Random(17)
    yield "spread", [rnd.uniform(-1000, 1000) for _ in range(20000)]
    yield "duplicates", [float(rnd.randint(0, 5)) for _ in range(20000)]
    # A dense cluster: most values within one bucket (a factor of 1.0001), all distinct.
    yield (
        "cluster",
        [1000.0 + rnd.random() * 0.05 for _ in range(20000)]
        + [rnd.uniform(1, 1e6) for _ in range(200)],
    )
    yield "heavy_tail", [rnd.paretovariate(0.7) for _ in range(20000)]
    yield (
        "edges",
        [0.0, -0.0, float("inf"), float("-inf"), 5e-324, -5e-324, 1e308] * 300
        + [rnd.gauss(0, 1) for _ in range(3000)],
    )


@pytest.mark.parametrize("name, values", list(_datasets()), ids=[n for n, _ in _datasets()])
@pytest.mark.parametrize("accuracy", [1000, 100])
def test_quantiles_are_within_the_rank_error_percentile_approx_promises(
    spark, name, values, accuracy
):
    df = spark.createDataFrame([(v,) for v in values] + [(None,)], "x double")
    got = compute_metrics(df, [ApproxQuantile(("x",), quantile=q, accuracy=accuracy) for q in QS])
    ordered = sorted(values)
    bound = len(values) / accuracy
    for q, metric in zip(QS, got, strict=True):
        assert _rank_error(ordered, metric.value, q) <= bound, (name, q, metric.value)


def test_a_dense_bucket_is_refined_on_its_own_values(spark, monkeypatch):
    """The cluster's bucket holds more values than the rank error allows: the answer
    comes from percentile_approx over that bucket's values alone, and is within it."""
    rnd = random.Random(3)
    values = [1000.0 + rnd.random() * 0.05 for _ in range(5000)]
    df = spark.createDataFrame([(v,) for v in values], "x double")
    import pyspark.sql.functions as functions

    refined = []
    original = functions.percentile_approx

    def spy(col, percentage, accuracy=10000):
        refined.append((percentage, accuracy))
        return original(col, percentage, accuracy)

    monkeypatch.setattr(functions, "percentile_approx", spy)
    frame = A._sketch_frame(df, A.Sketch("histogram", "x", None))
    assert len(frame.collect()) <= 2  # the whole cluster in one or two buckets
    value = compute_metrics(df, [ApproxQuantile(("x",), quantile=0.5)])[0].value
    assert refined
    assert _rank_error(sorted(values), value, 0.5) <= len(values) / 1000


def test_quantile_of_nothing_is_none_and_filters_apply(spark):
    df = spark.createDataFrame(
        [(1.0, "a"), (2.0, "b"), (3.0, "a"), (None, "a")], "x double, g string"
    )
    none = spark.createDataFrame([(None,)], "x double")
    assert compute_metrics(none, [ApproxQuantile(("x",))])[0].value is None
    got = compute_metrics(df, [ApproxQuantile(("x",), quantile=1.0, where="g = 'a'")])
    assert got[0].value == 3.0
    got = compute_metrics(df, [ApproxQuantile(("x",), quantile=0.5, where="g = 'a'")])
    assert got[0].value == 1.0  # rank ceil(0.5 * 2) = 1 of (1, 3)


# --- Sketches riding on the scan aggregation (docs/decisions/0071-sketches-ride-on-the-scan.md)


def _boundary_values():
    """Values on and one ulp around bucket boundaries (exp(b / 1024)), both signs, and the
    hostile ones: zeros of both signs, infinities, NaN, subnormals, the largest double."""
    out = []
    for b in (-700_000, -5000, -1, 0, 1, 7, 1023, 1024, 2048, 7071, 500_000, 726_000):
        edge = math.exp(b / 1024)
        for v in (math.nextafter(edge, 0.0), edge, math.nextafter(edge, math.inf)):
            out += [v, -v]
    return [*out, 0.0, -0.0, math.inf, -math.inf, math.nan, 5e-324, -5e-324, 1.7976931348623157e308]


def _same_rows(rows):
    """Rows comparable across paths: NaN as a string (NaN != NaN), -0.0 as 0.0."""

    def norm(x):
        return "nan" if isinstance(x, float) and math.isnan(x) else (x + 0.0 if x == 0 else x)

    return sorted((tuple(norm(x) for x in row) for row in rows), key=repr)


def _rider_rows(rider):
    """The accumulator's whole merged state as the sketch's groupBy rows (`encoded`: a
    quantile reads three buckets through `locate`; these tests compare every one)."""
    data = base64.b64decode(rider.accumulator.encoded())
    if rider.sketch.kind == "registers":
        return list(struct.iter_unpack(">iq", data))
    return list(struct.iter_unpack(">qqdd", data))


def _ride(df, sketch):
    """The sketch filled by a scan aggregation: (rows, the aggregation's count of its rows)."""
    rider = A.riders(df.sparkSession, [_analyzer_of(sketch)])[0]
    frame, _ = A.scan_frame(df, [], [rider])
    counted = frame.collect()[0][0]
    assert not rider.accumulator.driverEvaluated()
    assert int(rider.accumulator.count()) == counted
    return _rider_rows(rider), counted


def _analyzer_of(sketch):
    if sketch.kind == "registers":
        return ApproxCountDistinct((sketch.column,), where=sketch.where)
    return ApproxQuantile((sketch.column,), where=sketch.where)


def test_riding_sketches_fill_exactly_the_groupbys_rows(spark):
    """The accumulator's registers and histogram buckets (count, least, greatest) are the
    groupBy's, row for row, over hostile doubles, integers, strings and a filter."""
    assert A.can_ride(spark), "floe's jar (make setup builds it) is not in the session"
    rnd = random.Random(5)
    values = _boundary_values() + [rnd.uniform(-1e6, 1e6) for _ in range(5000)]
    values += [rnd.paretovariate(0.5) for _ in range(3000)] + [None] * 40
    rows = [(v, i, f"s{i % 977}", i % 3) for i, v in enumerate(values)]
    df = spark.createDataFrame(rows, "x double, n bigint, s string, g int").repartition(3)
    sketches = [
        A.Sketch("histogram", "x", None),
        A.Sketch("histogram", "x", "g = 1"),
        A.Sketch("histogram", "n", None),
        A.Sketch("registers", "x", None),
        A.Sketch("registers", "n", "g <> 2"),
        A.Sketch("registers", "s", None),
    ]
    for sketch in sketches:
        ridden, counted = _ride(df, sketch)
        grouped = [tuple(r) for r in A._sketch_frame(df, sketch).collect()]
        assert _same_rows(ridden) == _same_rows(grouped), sketch
        assert counted == df.where(A._keep(df, sketch)).count(), sketch


def test_the_accumulator_locates_each_rank_in_the_bucket_the_rows_hold(spark):
    """A riding quantile asks the accumulator for the bucket at a rank instead of taking
    every bucket: for the first, the last and a spread of ranks over hostile doubles (both
    signs, zeros, infinities, NaN, subnormals), the bucket, its count, its least and
    greatest value and the rows before it are the groupBy rows' own."""
    rnd = random.Random(13)
    values = _boundary_values() + [rnd.uniform(-1e6, 1e6) for _ in range(3000)]
    values += [rnd.paretovariate(0.5) for _ in range(2000)] + [None] * 10
    df = spark.createDataFrame([(v,) for v in values], "x double").repartition(3)
    sketch = A.Sketch("histogram", "x", None)
    rider = A.riders(spark, [_analyzer_of(sketch)])[0]
    frame, _ = A.scan_frame(df, [], [rider])
    counted = frame.collect()[0][0]
    grouped = [tuple(r) for r in A._sketch_frame(df, sketch).collect()]
    n, from_rows = A.SketchResult(sketch, grouped, df)._buckets()
    assert n == counted == len(values) - 10
    ranks = sorted({1, 2, n - 1, n, *(rnd.randint(1, n) for _ in range(300))})
    locate = A._rider_locate(rider)
    for rank in ranks:
        assert _same_rows([locate(rank)]) == _same_rows([from_rows(rank)]), rank
    with pytest.raises(A.AnalyzerError, match="no bucket at rank"):
        locate(n + 1)


def test_riding_quantiles_equal_the_groupbys_over_hostile_values(spark):
    rnd = random.Random(17)
    values = _boundary_values() * 20 + [rnd.gauss(0, 1e3) for _ in range(4000)]
    df = spark.createDataFrame([(v, i % 2) for i, v in enumerate(values)], "x double, g int")
    analyzers = [
        ApproxQuantile(("x",), quantile=q, where=w)
        for q in (0.0, 0.0001, 0.01, 0.25, 0.5, 0.75, 0.99, 0.9999, 1.0)
        for w in (None, "g = 1")
    ]
    ridden = [m.value for m in compute_metrics(df, analyzers)]
    grouped = [m.value for m in compute_metrics(df, analyzers, ride=False)]
    assert _same_rows([ridden]) == _same_rows([grouped])


def test_riding_and_grouped_checks_give_the_same_metrics(spark):
    rnd = random.Random(9)
    rows = [(rnd.gauss(50, 20), rnd.randint(0, 400), rnd.choice("ab")) for _ in range(20000)]
    df = spark.createDataFrame([*rows, (None, None, "a")], "x double, k int, g string")
    analyzers = [
        A.Size(),
        ApproxQuantile(("x",), quantile=0.1),
        ApproxQuantile(("x",), quantile=0.9, where="g = 'a'"),
        ApproxCountDistinct(("k",)),
        ApproxCountDistinct(("x",), where="g = 'b'"),
    ]
    ridden = compute_metrics(df, analyzers)
    grouped = compute_metrics(df, analyzers, ride=False)
    assert [m.value for m in ridden] == [m.value for m in grouped]
    assert ridden[3].value == _spark_distinct(df, "k")


def test_a_sketch_computed_again_counts_each_partition_once(spark):
    """A partition computed again (a retried task, a stage run again) is merged once: a
    second aggregation on the same accumulator runs every partition's task again, and
    leaves the rows and the count of one run."""
    df = spark.range(30000).selectExpr("cast(id % 7001 as double) / 7 as x").repartition(4)
    rider = A.riders(spark, [ApproxQuantile(("x",))])[0]
    first = A.scan_frame(df, [], [rider])[0].collect()[0][0]
    once = _rider_rows(rider)
    again = A.scan_frame(df, [], [rider])[0]  # a new plan: its tasks run again
    assert again.collect()[0][0] == first == int(rider.accumulator.count()) == 30000
    assert _rider_rows(rider) == once


def test_a_non_deterministic_filter_keeps_the_sketches_as_groupbys(spark):
    """Spark refuses a non-deterministic expression inside an aggregate function, which a
    riding sketch's filter is; the groupBy's filter takes it: same values as before."""
    df = spark.range(4000).selectExpr("id % 301 as k", "id / 10.0d as x")
    analyzers = [
        A.Size(),
        ApproxCountDistinct(("k",), where="rand() < 2"),
        ApproxQuantile(("x",), quantile=0.5, where="rand() < 2"),
    ]
    got = [m.value for m in compute_metrics(df, analyzers)]
    assert got == [m.value for m in compute_metrics(df, analyzers, ride=False)]
    assert got[0] == 4000 and got[1] == _spark_distinct(df, "k")


def test_a_constant_column_folded_on_the_driver_falls_back_with_the_same_values(spark, caplog):
    """A sketch of a column the optimizer knows to be constant: Spark folds the call that
    fills the accumulator on the driver (docs/decisions/0072-jvm-functions-called-in-place.md),
    which the reconciliation catches: the groupBys answer, with the same values."""
    df = spark.range(2000).select(F.lit(7).cast("bigint").alias("x"), F.col("id"))
    analyzers = [ApproxCountDistinct(("x",)), ApproxQuantile(("x",), quantile=0.5)]
    with caplog.at_level("INFO", logger=A.__name__):
        got = [m.value for m in compute_metrics(df, analyzers)]
    assert got == [m.value for m in compute_metrics(df, analyzers, ride=False)] == [1, 7.0]
    assert "evaluated on the driver" in caplog.text


def test_a_sketch_that_does_not_reconcile_runs_its_groupby(spark, monkeypatch, caplog):
    """An accumulator whose count differs from the aggregation's is not trusted: the
    sketches run as their groupBys, with the same values, and the log says why."""
    df = spark.range(5000).selectExpr("id % 613 as k", "id / 10.0d as x")
    analyzers = [ApproxCountDistinct(("k",)), ApproxQuantile(("x",), quantile=0.5)]
    expected = [m.value for m in compute_metrics(df, analyzers, ride=False)]
    real = A.riders

    class Miscounted:
        def __init__(self, accumulator):
            self._accumulator = accumulator

        def __getattr__(self, name):
            return getattr(self._accumulator, name)

        def count(self):
            return self._accumulator.count() * 2

    def miscounting(spark, analyzers):
        return [A.Rider(r.sketch, Miscounted(r.accumulator)) for r in real(spark, analyzers)]

    monkeypatch.setattr(A, "riders", miscounting)
    grouped = []
    original = A._run_sketches
    monkeypatch.setattr(A, "_run_sketches", lambda *a: grouped.append(1) or original(*a))
    with caplog.at_level("INFO", logger=A.__name__):
        got = [m.value for m in compute_metrics(df, analyzers)]
    assert got == expected
    assert grouped == [1]
    assert "running its groupBy" in caplog.text


def test_sketches_ride_without_a_pass_of_their_own(spark):
    """With the jar, the scan analyzers and the sketches are one aggregation: fewer Spark
    jobs than the scan plus the sketches' union of groupBys."""
    df = spark.range(20000).selectExpr("id", "id % 97 as k", "id / 3.0d as x")
    analyzers = [A.Size(), A.Maximum(("x",)), ApproxCountDistinct(("k",)), ApproxQuantile(("x",))]

    def run(**kwargs):
        values = []
        jobs = spark_jobs(
            spark,
            lambda: values.extend(
                m.value for m in compute_metrics(df, analyzers, concurrent=False, **kwargs)
            ),
        )
        return values, jobs

    ridden, ride_jobs = run()
    grouped, group_jobs = run(ride=False)
    assert ridden == grouped
    assert ride_jobs < group_jobs
