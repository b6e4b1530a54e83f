"""Analyzers: Deequ's metrics as plain PySpark aggregate expressions, planned into one pass.

Deequ's central idea, kept here without its jar: every metric a table's checks need is an
aggregate, and aggregates over the same rows can share one scan. Each *scan* analyzer
contributes aggregate `Column`s to a single `df.agg(...)`. The two *sketch* analyzers
(approx_count_distinct, approx_quantile) are imperative aggregates, and one of them in an
aggregation switches Spark's whole-stage code generation off for ALL its aggregates, so
they get a second aggregation, which reads only their columns from the columnar table.
`one_read=True` observes them instead (`df.observe`) on the rows the first aggregation
reads: one read and one Spark job, for sources that are costly to read twice (a view over
joins, a DataFrame handed in). It is not the default because, on an Iceberg table, the
observing node splits the fused scan + aggregate code generation and costs more than a
second read of two Parquet columns (measured in bench/bench_dq.py, docs/quality.md). Each *grouping* analyzer
(uniqueness, distinctness, unique-value ratio) needs value frequencies, so analyzers over the
same column set share one `groupBy(columns)` whose per-filter counts feed all of them.
A per-analyzer `where` filter is folded into its aggregates (`when(where, ...)`) rather
than applied as a separate filtered query, so filters never add a scan.

Semantics (documented because checks are written against them):

- `size`: number of rows (matching `where`).
- `completeness(c)`: share of rows where `c` is not NULL; None on an empty table.
- `uniqueness(c...)`: share of rows (with at least one of `c...` not NULL) whose value
  occurs exactly once (Deequ's definition); `distinctness`: distinct values / such rows;
  `unique_value_ratio`: values occurring once / distinct values.
- `pattern_match`, `contained_in`, `data_type`: share of the NON-NULL values that match
  (NULLs are completeness's business); None when there is no non-NULL value.
- `compliance(predicate)`: share of rows where the SQL predicate is true (NULL counts as
  false, as in Deequ); None on an empty table.
- `minimum`, `maximum`, `mean`, `sum`, `standard_deviation` (population, as in Deequ),
  `approx_quantile`, `max_length`: over non-NULL values; None when there are none.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

# Value kinds of `data_type`, in Deequ's order of inference precedence.
DATA_TYPE_KINDS = ("integral", "fractional", "boolean", "string")
_INTEGRAL_RE = r"^\s*[+-]?\d+\s*$"
_FRACTIONAL_RE = r"^\s*[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?\s*$"


class AnalyzerError(ValueError):
    """An analyzer was declared with arguments it cannot use (bad column, kind, quantile)."""


@dataclass(frozen=True)
class Analyzer:
    """One metric over a table. `where` is an optional SQL predicate restricting the rows."""

    name: ClassVar[str] = ""
    # "scan" (the shared aggregation), "sketch" (the shared aggregation of imperative
    # sketches) or "grouping" (one shared groupBy per column set).
    kind: ClassVar[str] = "scan"
    columns: tuple[str, ...] = ()
    where: str | None = None

    @property
    def argument(self) -> str | None:
        """The analyzer's non-column parameter, as stored in the metrics repository."""
        return None

    def key(self) -> tuple[str, tuple[str, ...], str | None, str | None]:
        return (self.name, self.columns, self.argument, self.where)

    def describe(self) -> str:
        args = [*self.columns]
        if self.argument is not None:
            args.append(repr(self.argument))
        text = f"{self.name}({', '.join(args)})" if args else self.name
        return f"{text} where {self.where}" if self.where else text

    # Scan analyzers: aggregate expressions, then the metric from their values.
    def aggregates(self, df: DataFrame) -> list[Column]:
        raise NotImplementedError

    def finish(self, values: Sequence[Any]) -> float | None:
        raise NotImplementedError

    # Helpers shared by subclasses.
    def _cond(self) -> Column:
        from pyspark.sql import functions as F

        return F.expr(self.where) if self.where else F.lit(True)

    def _col(self, df: DataFrame, i: int = 0) -> Column:
        return df[self.columns[i]]

    def _rows(self) -> Column:
        from pyspark.sql import functions as F

        return F.count(F.when(self._cond(), F.lit(1)))

    def _nonnull(self, df: DataFrame) -> Column:
        from pyspark.sql import functions as F

        return F.count(F.when(self._cond(), self._col(df)))

    def _over(self, df: DataFrame, agg: Any) -> Column:
        """`agg` (a pyspark.sql.functions aggregate) over the column, rows filtered by where."""
        from pyspark.sql import functions as F

        return agg(F.when(self._cond(), self._col(df).cast("double")))


def _ratio(num: Any, den: Any) -> float | None:
    if den is None or den == 0 or num is None:
        return None
    return float(num) / float(den)


def _num(value: Any) -> float | None:
    return None if value is None else float(value)


@dataclass(frozen=True)
class Size(Analyzer):
    name: ClassVar[str] = "size"

    def aggregates(self, df: DataFrame) -> list[Column]:
        return [self._rows()]

    def finish(self, values: Sequence[Any]) -> float | None:
        return float(values[0])


@dataclass(frozen=True)
class Completeness(Analyzer):
    name: ClassVar[str] = "completeness"

    def aggregates(self, df: DataFrame) -> list[Column]:
        return [self._nonnull(df), self._rows()]

    def finish(self, values: Sequence[Any]) -> float | None:
        return _ratio(values[0], values[1])


@dataclass(frozen=True)
class ApproxCountDistinct(Analyzer):
    name: ClassVar[str] = "approx_count_distinct"
    kind: ClassVar[str] = "sketch"

    def aggregates(self, df: DataFrame) -> list[Column]:
        from pyspark.sql import functions as F

        return [F.approx_count_distinct(F.when(self._cond(), self._col(df)))]

    def finish(self, values: Sequence[Any]) -> float | None:
        return float(values[0])


def _simple(metric: str, spark_fn: str) -> type[Analyzer]:
    """An analyzer that is one Spark aggregate function over the (filtered) column."""

    @dataclass(frozen=True)
    class _Simple(Analyzer):
        name: ClassVar[str] = metric

        def aggregates(self, df: DataFrame) -> list[Column]:
            from pyspark.sql import functions as F

            return [self._over(df, getattr(F, spark_fn))]

        def finish(self, values: Sequence[Any]) -> float | None:
            return _num(values[0])

    return _Simple


class Minimum(_simple("minimum", "min")):  # type: ignore[misc]
    """Smallest non-NULL value (numeric columns; strings are cast)."""


class Maximum(_simple("maximum", "max")):  # type: ignore[misc]
    """Largest non-NULL value."""


class Mean(_simple("mean", "avg")):  # type: ignore[misc]
    """Mean of non-NULL values."""


class Sum(_simple("sum", "sum")):  # type: ignore[misc]
    """Sum of non-NULL values."""


class StandardDeviation(_simple("standard_deviation", "stddev_pop")):  # type: ignore[misc]
    """Population standard deviation (Deequ's), so one value has deviation 0, not NULL."""


@dataclass(frozen=True)
class MaxLength(Analyzer):
    name: ClassVar[str] = "max_length"

    def aggregates(self, df: DataFrame) -> list[Column]:
        from pyspark.sql import functions as F

        return [F.max(F.when(self._cond(), F.length(self._col(df).cast("string"))))]

    def finish(self, values: Sequence[Any]) -> float | None:
        return _num(values[0])


@dataclass(frozen=True)
class ApproxQuantile(Analyzer):
    """Approximate quantile; `accuracy` 1000 = relative rank error 0.001 (Deequ uses 0.01)."""

    name: ClassVar[str] = "approx_quantile"
    kind: ClassVar[str] = "sketch"
    quantile: float = 0.5
    accuracy: int = 1000

    def __post_init__(self) -> None:
        if not 0.0 <= self.quantile <= 1.0:
            raise AnalyzerError(f"approx_quantile: quantile {self.quantile} is not in [0, 1]")

    @property
    def argument(self) -> str | None:
        return repr(float(self.quantile))

    def aggregates(self, df: DataFrame) -> list[Column]:
        from pyspark.sql import functions as F

        value = F.when(self._cond(), self._col(df).cast("double"))
        return [F.percentile_approx(value, float(self.quantile), self.accuracy)]

    def finish(self, values: Sequence[Any]) -> float | None:
        return _num(values[0])


@dataclass(frozen=True)
class PatternMatch(Analyzer):
    name: ClassVar[str] = "pattern_match"
    pattern: str = ""

    def __post_init__(self) -> None:
        try:
            re.compile(self.pattern)
        except re.error as exc:
            raise AnalyzerError(f"pattern_match: invalid regex {self.pattern!r}: {exc}") from exc

    @property
    def argument(self) -> str | None:
        return self.pattern

    def aggregates(self, df: DataFrame) -> list[Column]:
        from pyspark.sql import functions as F

        value = self._col(df).cast("string")
        hit = self._cond() & value.isNotNull() & value.rlike(self.pattern)
        return [F.count(F.when(hit, F.lit(1))), self._nonnull(df)]

    def finish(self, values: Sequence[Any]) -> float | None:
        return _ratio(values[0], values[1])


@dataclass(frozen=True)
class Compliance(Analyzer):
    name: ClassVar[str] = "compliance"
    predicate: str = "true"

    @property
    def argument(self) -> str | None:
        return self.predicate

    def aggregates(self, df: DataFrame) -> list[Column]:
        from pyspark.sql import functions as F

        hit = self._cond() & F.coalesce(F.expr(self.predicate), F.lit(False))
        return [F.count(F.when(hit, F.lit(1))), self._rows()]

    def finish(self, values: Sequence[Any]) -> float | None:
        return _ratio(values[0], values[1])


@dataclass(frozen=True)
class ContainedIn(Analyzer):
    name: ClassVar[str] = "contained_in"
    allowed: tuple[Any, ...] = ()

    @property
    def argument(self) -> str | None:
        return repr(list(self.allowed))

    def aggregates(self, df: DataFrame) -> list[Column]:
        from pyspark.sql import functions as F

        value = self._col(df)
        hit = self._cond() & value.isNotNull() & value.isin(list(self.allowed))
        return [F.count(F.when(hit, F.lit(1))), self._nonnull(df)]

    def finish(self, values: Sequence[Any]) -> float | None:
        return _ratio(values[0], values[1])


def value_kind(df: DataFrame, column: str) -> Column:
    """The `data_type` kind of each value: integral / fractional / boolean / string.

    Typed columns get their kind from the Spark type (no per-row work); strings are
    classified by parsing, which is what makes a CSV landed as text comparable to the
    typed table it came from (the migration-validation use case).

    The regular expressions define the kinds; two exact shortcuts answer the common
    values before them (a regular expression decodes each value into a Java string and
    was most of a `data_type` check's cost, docs/decisions/0017-dq-one-scan-cost.md):
    a value equal to the text of the bigint Spark parses from it is a canonical integer
    (`-?[1-9][0-9]*|0`, which `_INTEGRAL_RE` matches), and the six spellings of
    true/false that `lower(trim(...))` accepts without trimming are booleans, which
    neither numeric expression matches. Every other value takes the regular expressions.
    """
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    dtype = df.schema[column].dataType
    value = df[column]
    if isinstance(dtype, T.IntegralType):
        return F.when(value.isNotNull(), F.lit("integral"))
    if isinstance(dtype, (T.FractionalType,)):
        return F.when(value.isNotNull(), F.lit("fractional"))
    if isinstance(dtype, T.BooleanType):
        return F.when(value.isNotNull(), F.lit("boolean"))
    if not isinstance(dtype, T.StringType):
        return F.when(value.isNotNull(), F.lit("string"))
    lowered = F.lower(F.trim(value))
    kind = F.when(value.isNull(), F.lit(None))
    if not _ansi(df):
        # The legacy cast parses bytes and returns NULL on failure. Not under ANSI mode:
        # there a failed cast raises, and try_cast pays a caught exception per
        # non-numeric value (measured 20x slower than the regular expression).
        kind = kind.when(value.cast("bigint").cast("string") == value, F.lit("integral"))
    return (
        kind.when(value.isin(*_BOOLEAN_SPELLINGS), F.lit("boolean"))
        .when(value.rlike(_INTEGRAL_RE), F.lit("integral"))
        .when(value.rlike(_FRACTIONAL_RE), F.lit("fractional"))
        .when(lowered.isin("true", "false"), F.lit("boolean"))
        .otherwise(F.lit("string"))
    )


_BOOLEAN_SPELLINGS = ("true", "false", "TRUE", "FALSE", "True", "False")


def _ansi(df: DataFrame) -> bool:
    """Whether casts built now use ANSI mode (a Cast takes its mode when it is built)."""
    conf = df.sparkSession.conf.get("spark.sql.ansi.enabled", "false")
    return str(conf).strip().lower() == "true"


@dataclass(frozen=True)
class DataType(Analyzer):
    """Share of non-NULL values of one kind (integral, fractional, boolean, string)."""

    name: ClassVar[str] = "data_type"
    value_kind: str = "string"

    def __post_init__(self) -> None:
        if self.value_kind not in DATA_TYPE_KINDS:
            raise AnalyzerError(
                f"data_type: kind {self.value_kind!r} is not one of {', '.join(DATA_TYPE_KINDS)}"
            )

    @property
    def argument(self) -> str | None:
        return self.value_kind

    def aggregates(self, df: DataFrame) -> list[Column]:
        from pyspark.sql import functions as F

        shared = _kind_column(self.columns[0])
        kind = df[shared] if shared in df.columns else value_kind(df, self.columns[0])
        hit = self._cond() & (kind == F.lit(self.value_kind))
        return [F.count(F.when(hit, F.lit(1))), self._nonnull(df)]

    def finish(self, values: Sequence[Any]) -> float | None:
        return _ratio(values[0], values[1])


def _kind_column(column: str) -> str:
    """Name of the projected `value_kind` of `column` shared by its `data_type` analyzers."""
    import hashlib

    return "__floe_dq_kind_" + hashlib.sha1(column.encode()).hexdigest()[:16]


def _with_shared_kinds(df: DataFrame, analyzers: Sequence[Analyzer]) -> DataFrame:
    """`df` plus, for a column with several `data_type` analyzers (a profile asks all
    four kinds), its value kind computed once per row in a projection under the
    aggregation, instead of once per analyzer: the kinds' shared regular expressions
    are the costly part, and Spark does not collapse a projection whose costly
    expression is used more than once into the aggregate."""
    per_column: dict[str, int] = {}
    for analyzer in analyzers:
        if isinstance(analyzer, DataType):
            per_column[analyzer.columns[0]] = per_column.get(analyzer.columns[0], 0) + 1
    shared = [c for c, n in per_column.items() if n > 1]
    if not shared:
        return df
    return df.select("*", *[value_kind(df, c).alias(_kind_column(c)) for c in shared])


@dataclass(frozen=True)
class Uniqueness(Analyzer):
    name: ClassVar[str] = "uniqueness"
    kind: ClassVar[str] = "grouping"


@dataclass(frozen=True)
class Distinctness(Analyzer):
    name: ClassVar[str] = "distinctness"
    kind: ClassVar[str] = "grouping"


@dataclass(frozen=True)
class UniqueValueRatio(Analyzer):
    name: ClassVar[str] = "unique_value_ratio"
    kind: ClassVar[str] = "grouping"


def infer_type(shares: dict[str, float | None]) -> str:
    """Deequ's inferred type from kind shares: any string wins, then boolean, fractional..."""
    present = {k for k, v in shares.items() if v}
    if "string" in present or ("boolean" in present and present - {"boolean"}):
        return "String"
    if "boolean" in present:
        return "Boolean"
    if "fractional" in present:
        return "Fractional"
    if "integral" in present:
        return "Integral"
    return "Unknown"


@dataclass(frozen=True)
class Metric:
    """One computed value. `value` is None where the metric is undefined (no rows/values)."""

    analyzer: Analyzer
    value: float | None

    @property
    def name(self) -> str:
        return self.analyzer.name

    @property
    def columns(self) -> tuple[str, ...]:
        return self.analyzer.columns

    @property
    def where(self) -> str | None:
        return self.analyzer.where


@dataclass
class Plan:
    """How `compute_metrics` will run: one aggregation for the scan analyzers, one for
    the sketches (or observed on the first one's read), one groupBy per column set."""

    scan: list[Analyzer] = field(default_factory=list)
    sketch: list[Analyzer] = field(default_factory=list)
    grouping: dict[tuple[str, ...], list[Analyzer]] = field(default_factory=dict)

    @property
    def passes(self) -> int:
        return (1 if self.scan else 0) + (1 if self.sketch else 0) + len(self.grouping)


def plan(analyzers: Sequence[Analyzer]) -> Plan:
    result = Plan()
    seen: set[tuple] = set()
    for analyzer in analyzers:
        if analyzer.key() in seen:
            continue
        seen.add(analyzer.key())
        if analyzer.kind == "grouping":
            result.grouping.setdefault(tuple(analyzer.columns), []).append(analyzer)
        elif analyzer.kind == "sketch":
            result.sketch.append(analyzer)
        else:
            result.scan.append(analyzer)
    return result


def _check_columns(df: DataFrame, analyzers: Sequence[Analyzer]) -> None:
    available = set(df.columns)
    lowered = {c.lower() for c in available}
    for analyzer in analyzers:
        if analyzer.name != "size" and analyzer.name != "compliance" and not analyzer.columns:
            raise AnalyzerError(f"{analyzer.name} needs a column")
        for column in analyzer.columns:
            if column not in available and column.lower() not in lowered:
                raise AnalyzerError(
                    f"{analyzer.describe()}: no column {column!r} (columns: "
                    f"{', '.join(sorted(available))})"
                )


def compute_metrics(
    df: DataFrame,
    analyzers: Sequence[Analyzer],
    *,
    cache: bool = False,
    one_read: bool = False,
) -> list[Metric]:
    """All metrics of `analyzers` on `df`: one aggregation (+ one for sketches) + one
    groupBy per column set, whatever the number of analyzers.

    `one_read=True` computes the sketches on the first aggregation's read (`df.observe`):
    scan and sketch analyzers then cost one read of `df` and one Spark job. `cache=True`
    persists `df` when more than one pass remains planned. Both off by default: on
    Iceberg/Parquet a second columnar scan of a few columns is cheaper than breaking the
    fused scan + aggregate or materialising the table in memory (bench/bench_dq.py).
    """
    from pyspark import StorageLevel

    _check_columns(df, analyzers)
    the_plan = plan(analyzers)
    passes = the_plan.passes - (1 if one_read and the_plan.scan and the_plan.sketch else 0)
    cached = cache and passes > 1
    if cached:
        df = df.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        values: dict[tuple, float | None] = {}
        if one_read:
            values.update(_run_scan(df, the_plan.scan, the_plan.sketch))
        else:
            values.update(_run_scan(df, the_plan.scan))
            values.update(_run_scan(df, the_plan.sketch))
        for columns, group in the_plan.grouping.items():
            values.update(_run_grouping(df, columns, group))
    finally:
        if cached:
            df.unpersist()
    out, emitted = [], set()
    for analyzer in analyzers:
        if analyzer.key() not in emitted:
            emitted.add(analyzer.key())
            out.append(Metric(analyzer, values[analyzer.key()]))
    return out


def _aggregate_columns(
    df: DataFrame, analyzers: Sequence[Analyzer], prefix: str
) -> tuple[list[Column], list[tuple[Analyzer, int, int]]]:
    """Every aggregate of `analyzers`, aliased `<prefix><i>`, and each one's value slice."""
    exprs: list[Column] = []
    slices: list[tuple[Analyzer, int, int]] = []
    for analyzer in analyzers:
        parts = analyzer.aggregates(df)
        start = len(exprs)
        exprs.extend(e.alias(f"{prefix}{start + i}") for i, e in enumerate(parts))
        slices.append((analyzer, start, len(exprs)))
    return exprs, slices


def scan_frame(
    df: DataFrame, analyzers: Sequence[Analyzer]
) -> tuple[DataFrame, list[tuple[Analyzer, int, int]]]:
    """The single aggregation computing every scan analyzer, and each one's value slice."""
    df = _with_shared_kinds(df, analyzers)
    exprs, slices = _aggregate_columns(df, analyzers, "_m")
    return df.agg(*exprs), slices


@dataclass
class OnePass:
    """The one query of a check run: the codegen-able aggregation `frame` over a scan that
    also feeds the sketches to `observation` (read after `frame` has been collected)."""

    frame: DataFrame
    slices: list[tuple[Analyzer, int, int]]
    observation: Any = None
    sketch_slices: list[tuple[Analyzer, int, int]] = field(default_factory=list)


def one_pass_frame(
    df: DataFrame, scan: Sequence[Analyzer], sketch: Sequence[Analyzer] = ()
) -> OnePass:
    """Scan and sketch analyzers over ONE read of `df`.

    HLL++ and percentile sketches are imperative aggregates: in the aggregation they
    would switch whole-stage code generation off for every aggregate in it, and in a
    second aggregation they would read the table again. So they are computed by
    `df.observe(...)` (a CollectMetrics node, accumulators fed by the same rows) under the
    codegen-able aggregation of the scan analyzers: one scan, one job, codegen kept.
    """
    import uuid

    from pyspark.sql import Observation

    if not scan:  # sketches alone: one aggregation of their own is already one scan
        frame, slices = scan_frame(df, sketch)
        return OnePass(frame, slices)
    if not sketch:
        frame, slices = scan_frame(df, scan)
        return OnePass(frame, slices)
    sketch_exprs, sketch_slices = _aggregate_columns(df, sketch, "_s")
    # A unique name: concurrent check runs (dbt threads) share the session's listener bus.
    observation = Observation(f"floe_dq_{uuid.uuid4().hex}")
    observed = _with_shared_kinds(df.observe(observation, *sketch_exprs), scan)
    scan_exprs, slices = _aggregate_columns(observed, scan, "_m")
    return OnePass(observed.agg(*scan_exprs), slices, observation, sketch_slices)


def _run_scan(
    df: DataFrame, scan: Sequence[Analyzer], sketch: Sequence[Analyzer] = ()
) -> dict[tuple, float | None]:
    if not scan and not sketch:
        return {}
    one = one_pass_frame(df, scan, sketch)
    row = list(one.frame.collect()[0])
    out = {a.key(): a.finish(row[start:end]) for a, start, end in one.slices}
    if one.observation is not None:
        observed = one.observation.get  # set once the query above has finished
        values = [observed[f"_s{i}"] for i in range(len(observed))]
        out.update({a.key(): a.finish(values[s:e]) for a, s, e in one.sketch_slices})
    return out


def _run_grouping(
    df: DataFrame, columns: tuple[str, ...], analyzers: Sequence[Analyzer]
) -> dict[tuple, float | None]:
    """Value frequencies of `columns` once, one count column per distinct filter."""
    from functools import reduce

    from pyspark.sql import functions as F

    wheres = sorted({a.where or "" for a in analyzers})
    any_present = reduce(lambda a, b: a | b, [df[c].isNotNull() for c in columns])
    counts = [
        F.count(F.when(F.expr(w) if w else F.lit(True), F.lit(1))).alias(f"_c{i}")
        for i, w in enumerate(wheres)
    ]
    freq = df.where(any_present).groupBy(*[df[c] for c in columns]).agg(*counts)
    stats = []
    for i in range(len(wheres)):
        c = F.col(f"_c{i}")
        stats += [
            F.sum(c).alias(f"_rows{i}"),
            F.count(F.when(c > 0, F.lit(1))).alias(f"_distinct{i}"),
            F.count(F.when(c == 1, F.lit(1))).alias(f"_unique{i}"),
        ]
    row = freq.agg(*stats).collect()[0]
    out: dict[tuple, float | None] = {}
    for analyzer in analyzers:
        i = wheres.index(analyzer.where or "")
        rows, distinct, unique = row[f"_rows{i}"], row[f"_distinct{i}"], row[f"_unique{i}"]
        if analyzer.name == "uniqueness":
            out[analyzer.key()] = _ratio(unique, rows)
        elif analyzer.name == "distinctness":
            out[analyzer.key()] = _ratio(distinct, rows)
        else:
            out[analyzer.key()] = _ratio(unique, distinct)
    return out


# Constructors by metric name, used by the check grammar.
ANALYZERS: dict[str, type[Analyzer]] = {
    cls.name: cls
    for cls in (
        Size,
        Completeness,
        Uniqueness,
        Distinctness,
        UniqueValueRatio,
        ApproxCountDistinct,
        Minimum,
        Maximum,
        Mean,
        StandardDeviation,
        Sum,
        ApproxQuantile,
        MaxLength,
        PatternMatch,
        Compliance,
        ContainedIn,
        DataType,
    )
}
