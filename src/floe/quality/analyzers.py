"""Analyzers: Deequ's metrics as plain PySpark aggregate expressions, planned into one pass.

Deequ's central idea, kept here without its jar: every metric a table's checks need is an
aggregate, and aggregates over the same rows can share one scan. Each *scan* analyzer
contributes aggregate `Column`s to a single `df.agg(...)`, which Spark compiles into one
code-generated loop fused with the columnar scan. The two *sketch* analyzers
(approx_count_distinct, approx_quantile) are not written with Spark's own sketch
functions: those are imperative aggregates, slow per value, and one of them in an
aggregation switches whole-stage code generation off for every aggregate in it. With
floe's jar in the session a sketch rides on the scan aggregation: a function the
aggregation calls on every row fills the sketch's accumulator (floe.jvm.SketchAccumulator)
in primitive arrays, so it costs neither a second read nor a shuffle, and the state it
fills is the groupBy's below, row for row; its count is reconciled with one the
aggregation computes (docs/decisions/0071-sketches-ride-on-the-scan.md). Without the jar
(or `ride=False`) each is a code-generated `groupBy`, over its column only, shared by
every sketch analyzer of that column and filter; a table's sketches run as one query, a
union of their groupBys (docs/decisions/0017-dq-one-scan-cost.md):

- approx_count_distinct: the HyperLogLog++ registers of Spark's `approx_count_distinct`
  (same hash, same register index and rank), as a minimum per register; the estimate
  comes from Spark's own HyperLogLog++ code on the driver, so the value is Spark's,
  to the unit. As groupBys, more than `MAX_REGISTER_GROUPBYS` such columns (a profile)
  are counted by Spark's function in one aggregation instead: a groupBy each would cost
  a shuffle each (riding, each column's registers cost one function call per row);
- approx_quantile: a histogram of the values over logarithmic buckets (a relative width
  of 1/1024), with each bucket's count, least and greatest value. The bucket that holds
  the quantile's rank gives the answer with a certificate: when its values are all equal
  the answer is exact; when it holds at most `n / accuracy` values any of them is within
  the rank error `percentile_approx` promises; otherwise (a dense cluster) Spark's
  `percentile_approx` runs on that bucket's values alone, with the same accuracy.

Each *grouping* analyzer (uniqueness, distinctness, unique-value ratio) needs value
frequencies, so analyzers over the same column set share one `groupBy(columns)` whose
per-filter counts feed all of them.
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

import bisect
import itertools
import logging
import math
import re
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar

from floe.runtime.jars import PerJvm

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

_log = logging.getLogger(__name__)

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

    # Sketch analyzers: the groupBy they read, then the metric from its rows.
    def sketch(self) -> Sketch:
        raise NotImplementedError

    def from_sketch(self, result: SketchResult) -> float | None:
        raise NotImplementedError

    # Helpers shared by subclasses. Without a `where` they build no `when(true, ...)`:
    # Spark's answer is the same, and a check run builds a few hundred columns over py4j,
    # a round trip each (docs/decisions/0074-check-columns-built-in-fewer-round-trips.md).
    def _filtered(self, value: Column) -> Column:
        """`value` on the rows `where` holds, NULL on the others."""
        from pyspark.sql import functions as F

        return F.when(F.expr(self.where), value) if self.where else value

    def _hits(self, hit: Column) -> Column:
        """How many rows `where` and `hit` hold on."""
        from pyspark.sql import functions as F

        if self.where:
            hit = F.expr(self.where) & hit
        return F.count(F.when(hit, F.lit(1)))

    def _col(self, df: DataFrame, i: int = 0) -> Column:
        # By name, resolved with the aggregation: `df[name]` resolves it against `df`'s
        # plan on the spot, a round trip of 0.5 ms per use (the columns were checked).
        from pyspark.sql import functions as F

        return F.col(self.columns[i])

    def _rows(self) -> Column:
        from pyspark.sql import functions as F

        return F.count(self._filtered(F.lit(1)))

    def _nonnull(self, df: DataFrame) -> Column:
        from pyspark.sql import functions as F

        return F.count(self._filtered(self._col(df)))

    def _over(self, df: DataFrame, agg: Any) -> Column:
        """`agg` (a pyspark.sql.functions aggregate) over the column, rows filtered by where."""
        return agg(self._filtered(self._col(df).cast("double")))


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
    """Spark's `approx_count_distinct` (HyperLogLog++, relative standard deviation 0.05),
    from its registers computed by a code-generated groupBy (see the module docstring)."""

    name: ClassVar[str] = "approx_count_distinct"
    kind: ClassVar[str] = "sketch"

    def sketch(self) -> Sketch:
        return Sketch("registers", self.columns[0], self.where)

    def from_sketch(self, result: SketchResult) -> float | None:
        return float(result.distinct())


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

        length = text_length(df.sparkSession, self._col(df).cast("string"))
        return [F.max(self._filtered(length))]

    def finish(self, values: Sequence[Any]) -> float | None:
        return _num(values[0])


@dataclass(frozen=True)
class ApproxQuantile(Analyzer):
    """Approximate quantile within a rank error of n / `accuracy` (1000: 0.001 of the
    values; Deequ's default is 0.01), as `percentile_approx` promises, from a histogram
    (see the module docstring)."""

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

    def sketch(self) -> Sketch:
        return Sketch("histogram", self.columns[0], self.where)

    def from_sketch(self, result: SketchResult) -> float | None:
        return result.quantile(self.quantile, self.accuracy)


# floe's byte-level matcher (docs/decisions/0061-regular-expressions-on-bytes.md).
BYTE_REGEX_CLASS = "floe.jvm.ByteRegex"
TEXT_CLASS = "floe.jvm.Text"
CALLS_CLASS = "floe.jvm.Calls"


def regex_find(spark: SparkSession, value: Column, pattern: str) -> Column:
    """``value rlike pattern`` (a string column): the same answers, NULL for NULL.

    With floe's jar in the session and ``pattern`` in the subset it compiles
    (floe.jvm.ByteRegex), generated code calls the compiled matcher on each value's UTF-8
    bytes where they lie, instead of decoding each value into a Java string for
    ``java.util.regex``; else Spark's rlike. The pattern goes to the JVM as a string
    argument, never into SQL text.
    """
    from pyspark.sql.column import Column as PyColumn

    column = _in_place_method(spark, BYTE_REGEX_CLASS, "column")
    found = column(value._jc, pattern) if column is not None else None
    return value.rlike(pattern) if found is None else PyColumn(found)


def _in_place(spark: SparkSession, name: str) -> Any | None:
    """Class ``name`` of floe's jar when the jar calls its functions in place
    (floe.jvm.Calls: a jar built before that has the class but not the call), else None."""
    from floe.runtime.jars import jvm_class

    if jvm_class(spark, CALLS_CLASS) is None:
        return None
    return jvm_class(spark, name)


_METHODS = PerJvm()


def _in_place_method(spark: SparkSession, name: str, method: str) -> Any | None:
    """Static method ``method`` of :func:`_in_place`'s class ``name``, or None. Kept per
    JVM: py4j looks a static method up by reflection on each use (a py4j member is a
    name and a gateway, no state), and a check run calls a few on every run."""
    cls = _in_place(spark, name)
    if cls is None:
        return None
    return _METHODS.get(spark.sparkContext._jvm, f"{name}.{method}", lambda: getattr(cls, method))


_ELIGIBLE = PerJvm()


def _byte_regex_compiles(spark: SparkSession, pattern: str) -> bool:
    """Whether floe's byte matcher is there and compiles ``pattern`` (kept per JVM: the
    answer for a pattern is fixed by the jar the JVM loaded)."""
    udf = _in_place_method(spark, BYTE_REGEX_CLASS, "udf")
    if udf is None:
        return False
    return bool(_ELIGIBLE.get(spark.sparkContext._jvm, pattern, lambda: udf(pattern) is not None))


def text_length(spark: SparkSession, value: Column) -> Column:
    """``length(value)`` of a string column, Spark's answer (characters), NULL for NULL:
    with floe's jar, counted without stepping through an ASCII value byte by byte
    (floe.jvm.Text, docs/decisions/0072-jvm-functions-called-in-place.md)."""
    from pyspark.sql import functions as F
    from pyspark.sql.column import Column as PyColumn

    length = _in_place_method(spark, TEXT_CLASS, "length")
    return F.length(value) if length is None else PyColumn(length(value._jc))


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
        value = self._col(df).cast("string")
        hit = value.isNotNull() & regex_find(df.sparkSession, value, self.pattern)
        return [self._hits(hit), self._nonnull(df)]

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

        return [self._hits(F.coalesce(F.expr(self.predicate), F.lit(False))), self._rows()]

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
        # Literal columns: `isin` of plain values looks `functions` up twice per value.
        hit = value.isNotNull() & value.isin([F.lit(v) for v in self.allowed])
        return [self._hits(hit), self._nonnull(df)]

    def finish(self, values: Sequence[Any]) -> float | None:
        return _ratio(values[0], values[1])


def value_kind(df: DataFrame, column: str) -> Column:
    """The `data_type` kind of each value: integral / fractional / boolean / string.

    Typed columns get their kind from the Spark type (no per-row work); strings are
    classified by parsing, which is what makes a CSV landed as text comparable to the
    typed table it came from (the migration-validation use case).

    The regular expressions define the kinds; exact shortcuts answer the common values
    before them (Spark's rlike decodes each value into a Java string and was most of a
    `data_type` check's cost, docs/decisions/0017-dq-one-scan-cost.md): the six
    spellings of true/false that `lower(trim(...))` accepts without trimming are
    booleans, which neither numeric expression matches; and, without floe's byte
    matcher, a value equal to the text of the bigint Spark parses from it is a canonical
    integer (`-?[1-9][0-9]*|0`, which `_INTEGRAL_RE` matches). Every other value takes
    the regular expressions.
    """
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    dtype = df.schema[column].dataType
    value = F.col(column)  # resolved with the aggregation (see Analyzer._col)
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
    if not _ansi(df) and not _byte_regex_compiles(df.sparkSession, _INTEGRAL_RE):
        # The legacy cast parses bytes and returns NULL on failure. Not under ANSI mode:
        # there a failed cast raises, and try_cast pays a caught exception per
        # non-numeric value (measured 20x slower than the regular expression). Not with
        # floe's byte matcher either: it answers the integral pattern for less than the
        # cast's parse and print (docs/decisions/0072-jvm-functions-called-in-place.md).
        kind = kind.when(value.cast("bigint").cast("string") == value, F.lit("integral"))
    return (
        kind.when(value.isin([F.lit(b) for b in _BOOLEAN_SPELLINGS]), F.lit("boolean"))
        .when(regex_find(df.sparkSession, value, _INTEGRAL_RE), F.lit("integral"))
        .when(regex_find(df.sparkSession, value, _FRACTIONAL_RE), F.lit("fractional"))
        .when(lowered.isin(F.lit("true"), F.lit("false")), F.lit("boolean"))
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
        return [self._hits(kind == F.lit(self.value_kind)), self._nonnull(df)]

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


@dataclass(frozen=True)
class CountDistinct(Analyzer):
    """Exact number of distinct non-NULL keys (from the column set's shared groupBy)."""

    name: ClassVar[str] = "count_distinct"
    kind: ClassVar[str] = "grouping"


@dataclass(frozen=True)
class Entropy(Analyzer):
    """Shannon entropy (natural log) of the key distribution, as Deequ's `Entropy`:
    -sum(p ln p) over the keys' shares of the rows with a non-NULL key."""

    name: ClassVar[str] = "entropy"
    kind: ClassVar[str] = "grouping"


@dataclass(frozen=True)
class Correlation(Analyzer):
    """Pearson correlation of two numeric columns over rows where both are non-NULL."""

    name: ClassVar[str] = "correlation"

    def aggregates(self, df: DataFrame) -> list[Column]:
        from pyspark.sql import functions as F

        return [
            F.corr(
                self._filtered(self._col(df, 0).cast("double")),
                self._filtered(self._col(df, 1).cast("double")),
            )
        ]

    def finish(self, values: Sequence[Any]) -> float | None:
        value = _num(values[0])
        return None if value is None or math.isnan(value) else value


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


# --- Sketches: code-generated groupBys feeding approx_count_distinct and approx_quantile.

# Spark's approx_count_distinct default: relative standard deviation 0.05, which makes
# HyperLogLog++ address 2^9 registers (p = ceil(2 log2(1.106 / rsd))).
HLL_RELATIVE_SD = 0.05
HLL_P = math.ceil(2.0 * math.log(1.106 / HLL_RELATIVE_SD) / math.log(2.0))
# Histogram buckets per unit of ln|v|: a bucket's values differ by a factor of at most
# e^(1/1024) (0.1 %), fine enough that the median of a million spread values sits in a
# bucket of about a thousand, coarse enough that the groupBy stays small.
BUCKETS_PER_LN = 1024
_BUCKET_OFFSET = 1 << 62  # keeps negative values' buckets below zero's and positive ones'
_LONG_MAX = (1 << 63) - 1


@dataclass(frozen=True)
class Sketch:
    """One groupBy over one column (rows matching `where`), shared by the sketch
    analyzers that read it: `registers` (HyperLogLog++) or `histogram` (quantiles)."""

    kind: str
    column: str
    where: str | None


def _sketch_input(df: DataFrame, sketch: Sketch) -> Column:
    """What a sketch reads of each row: for registers, the 64-bit hash of the value as
    Spark's HyperLogLog++ takes it (floating values normalized: -0.0 as 0.0, every NaN
    as one); for a histogram, the value as a double."""
    from pyspark.sql import functions as F

    value = df[sketch.column]
    if sketch.kind == "registers":
        return F.xxhash64(_normalized(value, df.schema[sketch.column].dataType))
    return value.cast("double")


def _sketch_frame(df: DataFrame, sketch: Sketch) -> DataFrame:
    """The sketch's groupBy: code-generated, over its column alone."""
    from pyspark.sql import functions as F

    rows = df.where(_keep(df, sketch))
    if sketch.kind == "registers":
        # Spark's HyperLogLog++ update (HyperLogLogPlusPlusHelper.update): hash x =
        # xxhash64(v), register x >>> (64 - p), rank nlz((x << p) | 2^(p-1)) + 1. The
        # rank is monotone decreasing in w = ((x << p) | 2^(p-1)) >>> 1, a non-negative
        # long, so the register's maximum rank is the rank of its minimum w, computed on
        # the driver: nlz(w >>> 1) = nlz(w) + 1.
        hashed = _sketch_input(df, sketch)
        w = F.shiftrightunsigned(F.shiftleft(hashed, HLL_P).bitwiseOR(F.lit(1 << (HLL_P - 1))), 1)
        register = F.shiftrightunsigned(hashed, 64 - HLL_P).cast("int")
        return rows.select(register.alias("r"), w.alias("w")).groupBy("r").agg(F.min("w"))
    v = _sketch_input(df, sketch)
    k = F.lit(BUCKETS_PER_LN)
    bucket = (
        F.when(F.isnan(v), F.lit(_LONG_MAX))  # NaN sorts last, as percentile_approx has it
        .when(v == float("inf"), F.lit(_LONG_MAX - 1))
        .when(v == float("-inf"), F.lit(-_LONG_MAX))
        .when(v > 0, F.lit(_BUCKET_OFFSET) + F.floor(F.log(v) * k))
        .when(v < 0, F.lit(-_BUCKET_OFFSET) - F.floor(F.log(-v) * k))
        .otherwise(F.lit(0))
    )
    return (
        rows.select(bucket.alias("b"), v.alias("v"))
        .groupBy("b")
        .agg(F.count(F.lit(1)), F.min("v"), F.max("v"))
    )


def _keep(df: DataFrame, sketch: Sketch) -> Column:
    """The rows a sketch reads: its column not NULL, and its filter true."""
    from pyspark.sql import functions as F

    keep = df[sketch.column].isNotNull()
    if sketch.where:
        keep = keep & F.coalesce(F.expr(sketch.where), F.lit(False))
    return keep


def _normalized(value: Column, dtype: Any) -> Column:
    """A floating value as Spark's HyperLogLog++ hashes it: -0.0 as 0.0, NaN as NaN."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    if isinstance(dtype, (T.DoubleType, T.FloatType)):
        zero = F.lit(0.0).cast(dtype)
        nan = F.lit(float("nan")).cast(dtype)
        return F.when(value == zero, zero).when(F.isnan(value), nan).otherwise(value)
    return value


# A histogram's bucket at a rank: (rows in the buckets before it, its count, its least
# value, its greatest value).
Bucket = tuple[int, int, float, float]


@dataclass
class SketchResult:
    """The collected groupBy of one sketch, and how to read more of its column.

    A histogram is either its `rows` (the groupBy's) or, riding, a `locate` that finds
    the bucket at a rank in the accumulator and the `total` of its rows: a quantile reads
    three buckets, never all of them."""

    sketch: Sketch
    rows: list[tuple]
    df: DataFrame
    estimate: int | None = None  # approx_count_distinct computed by Spark's function
    locate: Callable[[int], Bucket] | None = None
    total: int | None = None

    def _buckets(self) -> tuple[int, Callable[[int], Bucket]]:
        """The histogram's row count, and its bucket at a rank (1 to the count)."""
        if self.locate is not None and self.total is not None:
            return self.total, self.locate
        buckets = sorted(self.rows)
        before = list(itertools.accumulate((count for _, count, _, _ in buckets), initial=0))

        def locate(rank: int) -> Bucket:
            at = bisect.bisect_left(before, rank) - 1
            _, count, low, high = buckets[at]
            return before[at], count, low, high

        return before[-1], locate

    def distinct(self) -> int:
        """Spark's HyperLogLog++ estimate of the registers (its own code, through the JVM)."""
        if self.estimate is not None:
            return self.estimate
        return hll_estimate(self.df.sparkSession, {r: w for r, w in self.rows})

    def quantile(self, q: float, accuracy: int) -> float | None:
        """The value at rank ceil(q * n), to n / accuracy ranks, as percentile_approx
        answers it (its least and greatest value within one rank error of the ends)."""
        n, locate = self._buckets()
        if n == 0:
            return None
        if q <= 1.0 / accuracy:
            return float(locate(1)[2])
        if q >= 1.0 - 1.0 / accuracy:
            return float(locate(n)[3])
        rank = max(1, math.ceil(q * n))
        before, count, low, high = locate(rank)
        # Every value of the bucket is within count - 1 ranks of the target.
        if low == high or (math.isnan(low) and math.isnan(high)) or count - 1 <= n / accuracy:
            return float(low)
        # A dense bucket: its own values, ranked with the same accuracy (the bucket
        # holds at most n values, so the rank error stays within n / accuracy).
        from pyspark.sql import functions as F

        inner = (rank - before) / count
        value = self.df[self.sketch.column].cast("double")
        keep = _keep(self.df, self.sketch) & value.between(F.lit(low), F.lit(high))
        found = self.df.where(keep).agg(F.percentile_approx(value, inner, accuracy)).first()
        return None if found is None or found[0] is None else float(found[0])


def hll_estimate(spark: SparkSession, registers: dict[int, int]) -> int:
    """Spark's own HyperLogLog++ estimate of `registers` (register -> minimum w, see
    `_sketch_frame`): the words approx_count_distinct would have, queried through the JVM."""
    jvm: Any = spark.sparkContext._jvm
    helper = jvm.org.apache.spark.sql.catalyst.util.HyperLogLogPlusPlusHelper(HLL_RELATIVE_SD)
    words = [0] * helper.numWords()
    per_word = 64 // 6
    for register, w in registers.items():
        rank = 64 - int(w).bit_length()  # nlz(w >>> 1) of the 64-bit w: the register's rank
        words[register // per_word] |= rank << (6 * (register % per_word))
    schema = jvm.org.apache.spark.sql.types.StructType.fromDDL(
        ", ".join(f"w{i} bigint" for i in range(len(words)))
    )
    row = jvm.org.apache.spark.sql.catalyst.expressions.SpecificInternalRow(schema)
    for i, word in enumerate(words):
        row.setLong(i, word - (1 << 64) if word > _LONG_MAX else word)
    return int(helper.query(row, 0))


# More approx_count_distinct columns than this in one run (a profile asks one per
# column) are read by Spark's own HyperLogLog++ in one aggregation instead: one groupBy
# per column costs a shuffle each, which on a small table outweighs the faster per-value
# work (20 columns of 2,000 rows: 2.75 s against 0.58 s; the values are the same).
MAX_REGISTER_GROUPBYS = 2


def _run_sketches(df: DataFrame, analyzers: Sequence[Analyzer]) -> dict[tuple, float | None]:
    """Every sketch's groupBy in one query (a union: one plan, one collect, each branch
    reading its own column), read by all the sketch's analyzers."""
    from functools import reduce

    from pyspark.sql import functions as F

    by_sketch: dict[Sketch, list[Analyzer]] = {}
    for analyzer in analyzers:
        by_sketch.setdefault(analyzer.sketch(), []).append(analyzer)
    sketches = list(by_sketch)
    results = {s: SketchResult(s, [], df) for s in sketches}
    registers = [s for s in sketches if s.kind == "registers"]
    if len(registers) > MAX_REGISTER_GROUPBYS:
        counted = df.agg(
            *[
                F.approx_count_distinct(
                    F.when(F.expr(s.where), df[s.column]) if s.where else df[s.column]
                )
                for s in registers
            ]
        ).first()
        for sketch, value in zip(registers, counted or [], strict=True):
            results[sketch].estimate = int(value)
        sketches = [s for s in sketches if s.kind != "registers"]
    branches = []
    for i, sketch in enumerate(sketches):
        frame = _sketch_frame(df, sketch)
        c = [F.col(name) for name in frame.columns]
        parts = [F.lit(i).alias("s"), c[0].cast("bigint").alias("k"), c[1].alias("a")]
        if sketch.kind == "histogram":
            parts += [c[2].alias("lo"), c[3].alias("hi")]
        else:
            parts += [
                F.lit(None).cast("double").alias("lo"),
                F.lit(None).cast("double").alias("hi"),
            ]
        branches.append(frame.select(*parts))
    if branches:
        for s, k, a, lo, hi in reduce(lambda x, y: x.unionAll(y), branches).collect():
            histogram = sketches[s].kind == "histogram"
            results[sketches[s]].rows.append((k, a, lo, hi) if histogram else (k, a))
    return _sketch_values(analyzers, results)


def _sketch_values(
    analyzers: Sequence[Analyzer], results: dict[Sketch, SketchResult]
) -> dict[tuple, float | None]:
    return {a.key(): a.from_sketch(results[a.sketch()]) for a in analyzers}


# --- Sketches riding on the scan aggregation (docs/decisions/0071-sketches-ride-on-the-scan.md).

# floe's jar: an accumulator per sketch, filled by a function the scan aggregation calls
# on every row, so the sketches need neither a second read nor a groupBy.
SKETCH_ACCUMULATOR_CLASS = "floe.jvm.SketchAccumulator"


@dataclass
class Rider:
    """A sketch filled by the scan aggregation's read: its JVM accumulator."""

    sketch: Sketch
    accumulator: Any


def can_ride(spark: SparkSession) -> bool:
    """Whether the session's JVM has floe's sketch accumulator (``floe dev build-jvm``)."""
    return _in_place(spark, SKETCH_ACCUMULATOR_CLASS) is not None


def riders(spark: SparkSession, analyzers: Sequence[Analyzer]) -> list[Rider]:
    """A fresh accumulator, registered with the session's context, per sketch of `analyzers`."""
    registers = _in_place_method(spark, SKETCH_ACCUMULATOR_CLASS, "registers")
    histogram = _in_place_method(spark, SKETCH_ACCUMULATOR_CLASS, "histogram")
    assert registers is not None and histogram is not None  # callers ask can_ride first
    jspark = spark._jsparkSession
    out = []
    for sketch in dict.fromkeys(a.sketch() for a in analyzers):
        if sketch.kind == "registers":
            accumulator = registers(jspark, HLL_P)
        else:
            accumulator = histogram(jspark, BUCKETS_PER_LN, str(_BUCKET_OFFSET))
        out.append(Rider(sketch, accumulator))
    return out


def _rider_columns(df: DataFrame, rider: Rider) -> list[Column]:
    """The rider's two aggregates: the count of rows it reads (reconciled with the
    accumulator's), and the call that fills it (always false or NULL)."""
    from pyspark.sql import functions as F
    from pyspark.sql.column import Column as PyColumn

    keep = _keep(df, rider.sketch)
    value = F.when(keep, _sketch_input(df, rider.sketch))
    filled = PyColumn(rider.accumulator.column(value._jc))
    return [F.count(F.when(keep, F.lit(1))), F.max(filled)]


def _rider_locate(rider: Rider) -> Callable[[int], Bucket]:
    """The histogram bucket at a rank, found by the accumulator (`SketchAccumulator.locate`:
    four longs in hex, the values as their bits)."""
    import struct

    def signed(text: str) -> int:
        value = int(text, 16)
        return value - (1 << 64) if value > _LONG_MAX else value

    def as_double(text: str) -> float:
        return float(struct.unpack(">d", struct.pack(">q", signed(text)))[0])

    def locate(rank: int) -> Bucket:
        found = str(rider.accumulator.locate(rank))
        if not found:
            raise AnalyzerError(f"sketch of {rider.sketch.column}: no bucket at rank {rank}")
        before, count, low, high = found.split(",")
        return signed(before), signed(count), as_double(low), as_double(high)

    return locate


@dataclass
class Plan:
    """How `compute_metrics` will run: one aggregation for the scan analyzers, one query
    for the sketches (a groupBy per sketch; with floe's jar they ride on the aggregation
    instead, but `passes` counts them as the query they may fall back to), one groupBy
    per uniqueness column set."""

    scan: list[Analyzer] = field(default_factory=list)
    sketch: list[Analyzer] = field(default_factory=list)
    grouping: dict[tuple[str, ...], list[Analyzer]] = field(default_factory=dict)

    @property
    def sketches(self) -> list[Sketch]:
        return list(dict.fromkeys(a.sketch() for a in self.sketch))

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
    concurrent: bool = True,
    ride: bool = True,
) -> list[Metric]:
    """All metrics of `analyzers` on `df`: one aggregation for the scan analyzers and the
    sketches riding on it (without floe's jar, one more query for the sketches: a groupBy
    per sketch column and filter), one groupBy per uniqueness column set, whatever the
    number of analyzers.

    `cache=True` persists `df` when more than one pass is planned (a DataFrame that is
    costly to compute twice); off by default: on Iceberg/Parquet each pass reads only
    its columns, which costs less than materialising the table in memory.

    `concurrent=True` (the default) submits the passes as concurrent Spark jobs, so one
    pass's tasks fill the cores another leaves idle (its last task, its shuffle, the
    driver's planning and collecting) — the same work, the same values
    (docs/decisions/0053-checks-passes-run-concurrently.md); `False` runs them in turn.

    `ride=True` (the default), with floe's jar in the session, fills the sketches from
    the scan aggregation's own read (floe.jvm.SketchAccumulator): one pass fewer, the
    same values (docs/decisions/0071-sketches-ride-on-the-scan.md); `False` runs them
    as their groupBys.
    """
    from pyspark import StorageLevel

    _check_columns(df, analyzers)
    the_plan = plan(analyzers)
    ride = ride and bool(the_plan.sketch) and can_ride(df.sparkSession)
    # Counted as if the sketches were a pass of their own even when they ride: a
    # fallback to their groupBys, or a dense quantile bucket, reads `df` again.
    cached = cache and the_plan.passes > 1
    if cached:
        df = df.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        passes: list[Callable[[], dict[tuple, float | None]]] = []
        if the_plan.scan or ride:
            passes.append(partial(_run_scan, df, the_plan.scan, the_plan.sketch if ride else ()))
        if the_plan.sketch and not ride:
            passes.append(partial(_run_sketches, df, the_plan.sketch))
        for columns, group in the_plan.grouping.items():
            passes.append(partial(_run_grouping, df, columns, group))
        values = _run_passes(passes, concurrent=concurrent)
    finally:
        if cached:
            df.unpersist()
    out, emitted = [], set()
    for analyzer in analyzers:
        if analyzer.key() not in emitted:
            emitted.add(analyzer.key())
            out.append(Metric(analyzer, values[analyzer.key()]))
    return out


# Threads that run a check run's extra passes, shared by every run of the process: under
# PySpark's pinned thread mode each Python thread that calls Spark holds its own gateway
# connection and JVM thread, so the threads are kept and reused rather than made and
# dropped by every run. Three: a run with more passes (several uniqueness column sets)
# queues the rest; two cores gain nothing from more concurrent jobs.
PASS_THREADS = 3
_pass_pool: ThreadPoolExecutor | None = None
_pass_pool_lock = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    global _pass_pool
    with _pass_pool_lock:
        if _pass_pool is None:
            _pass_pool = ThreadPoolExecutor(max_workers=PASS_THREADS, thread_name_prefix="floe-dq")
        return _pass_pool


def _run_passes(
    passes: Sequence[Callable[[], dict[tuple, float | None]]], *, concurrent: bool
) -> dict[tuple, float | None]:
    """Every pass's values: in turn, or as concurrent Spark jobs — the first pass in the
    caller's thread, the others on the shared pass threads.

    The pass threads take the caller's Spark local properties (job group, scheduler pool,
    description) for each pass, so a caller's job group still names every job of the run.
    Every pass is awaited; the first failure (in pass order) is raised after the others
    ended."""
    values: dict[tuple, float | None] = {}
    if not concurrent or len(passes) < 2:
        for run in passes:
            values.update(run())
        return values
    from pyspark.util import inheritable_thread_target

    pool = _pool()
    futures = [pool.submit(inheritable_thread_target(run)) for run in passes[1:]]
    try:
        values.update(passes[0]())
    finally:
        wait(futures)
    for future in futures:
        values.update(future.result())
    return values


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
    df: DataFrame, analyzers: Sequence[Analyzer], riding: Sequence[Rider] = ()
) -> tuple[DataFrame, list[tuple[Analyzer, int, int]]]:
    """The single aggregation computing every scan analyzer, and each one's value slice;
    the `riding` sketches' two aggregates each follow the analyzers' (`_rider_columns`)."""
    df = _with_shared_kinds(df, analyzers)
    exprs, slices = _aggregate_columns(df, analyzers, "_m")
    for i, rider in enumerate(riding):
        exprs.extend(e.alias(f"_s{i}_{j}") for j, e in enumerate(_rider_columns(df, rider)))
    return df.agg(*exprs), slices


def _run_scan(
    df: DataFrame, scan: Sequence[Analyzer], sketch: Sequence[Analyzer] = ()
) -> dict[tuple, float | None]:
    """The scan analyzers' values, and the `sketch` analyzers' filled by the same read.

    A sketch's accumulator must have read exactly the rows the aggregation counted for it,
    each once; if its count differs, or Spark evaluated its function outside a task (a
    plan folded on the driver), the sketches run as their groupBys instead. So they do
    when Spark refuses them in the aggregation (a non-deterministic `where`, which the
    groupBy's filter accepts)."""
    from pyspark.errors import AnalysisException

    if not scan and not sketch:
        return {}
    riding = riders(df.sparkSession, sketch) if sketch else []
    try:
        frame, slices = scan_frame(df, scan, riding)
    except AnalysisException as exc:
        if not riding:
            raise
        _log.info("sketches of %s cannot ride (%s); running their groupBys", df, exc)
        return {**_run_scan(df, scan), **_run_sketches(df, sketch)}
    row = list(frame.collect()[0])
    out = {a.key(): a.finish(row[start:end]) for a, start, end in slices}
    if not riding:
        return out
    first = len(row) - 2 * len(riding)
    results: dict[Sketch, SketchResult] = {}
    for i, rider in enumerate(riding):
        counted = row[first + 2 * i]
        accumulator = rider.accumulator
        if accumulator.driverEvaluated() or int(accumulator.count()) != counted:
            _log.info(
                "sketch of %s: the accumulator read %s rows of %s%s; running its groupBy",
                rider.sketch.column,
                accumulator.count(),
                counted,
                " (evaluated on the driver)" if accumulator.driverEvaluated() else "",
            )
            out.update(_run_sketches(df, sketch))
            return out
        if rider.sketch.kind == "registers":
            # Spark's HyperLogLog++ estimate, computed in the JVM from the registers.
            estimate = int(accumulator.estimate(HLL_RELATIVE_SD))
            results[rider.sketch] = SketchResult(rider.sketch, [], df, estimate=estimate)
        else:
            results[rider.sketch] = SketchResult(
                rider.sketch, [], df, locate=_rider_locate(rider), total=int(counted)
            )
    out.update(_sketch_values(sketch, results))
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
            F.sum(F.when(c > 0, c * F.log(c))).alias(f"_clogc{i}"),
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
        elif analyzer.name == "count_distinct":
            out[analyzer.key()] = float(distinct)
        elif analyzer.name == "entropy":
            # -sum(c/n ln(c/n)) = ln n - sum(c ln c) / n
            clogc = row[f"_clogc{i}"]
            out[analyzer.key()] = math.log(rows) - float(clogc) / float(rows) if rows else None
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
        CountDistinct,
        Entropy,
        Correlation,
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
