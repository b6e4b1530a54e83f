"""Column profiles (Deequ's ColumnProfilerRunner), computed in one aggregation pass.

A profile holds, per column: completeness, approximate distinct count, the inferred data
type (Integral / Fractional / Boolean / String / Unknown, Deequ's rule) with each kind's
share, numeric min/max, string max length, and - for low-cardinality columns - the
distinct values (a second, small aggregation over those columns only).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from floe.quality.analyzers import (
    DATA_TYPE_KINDS,
    Analyzer,
    ApproxCountDistinct,
    Completeness,
    DataType,
    Maximum,
    MaxLength,
    Minimum,
    Size,
    compute_metrics,
    infer_type,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

_STR_PREFIX = "__floe_str__"


@dataclass
class ColumnProfile:
    column: str
    spark_type: str
    completeness: float | None
    approx_distinct: int
    data_type: str
    type_shares: dict[str, float | None]
    minimum: float | None = None
    maximum: float | None = None
    max_length: float | None = None
    values: list[Any] | None = None  # the distinct values, for low-cardinality columns

    @property
    def numeric(self) -> bool:
        return self.minimum is not None or self.data_type in ("Integral", "Fractional")


@dataclass
class TableProfile:
    row_count: int
    columns: dict[str, ColumnProfile] = field(default_factory=dict)


def _is_numeric(df: DataFrame, column: str) -> bool:
    from pyspark.sql import types as T

    return isinstance(df.schema[column].dataType, T.NumericType)


def profile(
    df: DataFrame,
    *,
    columns: list[str] | None = None,
    low_cardinality: int = 10,
    distinct_on_strings: bool = False,
) -> TableProfile:
    """Profile `df` in one pass (+1 small pass for the values of low-cardinality columns).

    `distinct_on_strings` counts distinct values of each column cast to string, so that a
    typed table and the text file it was exported to get the same sketch (HyperLogLog
    hashes a long 5 and the string '5' differently): migration validation uses it.
    """
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    names = columns or [f.name for f in df.schema.fields if not _is_complex(f.dataType)]
    frame = df
    if distinct_on_strings:
        frame = df.withColumns({_STR_PREFIX + c: df[c].cast("string") for c in names})
    analyzers: list[Analyzer] = [Size()]
    for c in names:
        distinct_on = _STR_PREFIX + c if distinct_on_strings else c
        analyzers += [Completeness((c,)), ApproxCountDistinct((distinct_on,))]
        analyzers += [DataType((c,), value_kind=k) for k in DATA_TYPE_KINDS]
        if _is_numeric(df, c):
            analyzers += [Minimum((c,)), Maximum((c,))]
        elif isinstance(df.schema[c].dataType, T.StringType):
            analyzers.append(MaxLength((c,)))
    metrics = compute_metrics(frame, analyzers)
    values = {(m.name, m.columns, m.analyzer.argument): m.value for m in metrics}
    result = TableProfile(row_count=int(values[("size", (), None)] or 0))
    for c in names:
        distinct_on = _STR_PREFIX + c if distinct_on_strings else c
        shares = {k: values[("data_type", (c,), k)] for k in DATA_TYPE_KINDS}
        result.columns[c] = ColumnProfile(
            column=c,
            spark_type=df.schema[c].dataType.simpleString(),
            completeness=values[("completeness", (c,), None)],
            approx_distinct=int(values[("approx_count_distinct", (distinct_on,), None)] or 0),
            data_type=infer_type(shares),
            type_shares=shares,
            minimum=values.get(("minimum", (c,), None)),
            maximum=values.get(("maximum", (c,), None)),
            max_length=values.get(("max_length", (c,), None)),
        )
    small = [c for c in names if 0 < result.columns[c].approx_distinct <= low_cardinality]
    if small:
        row = df.agg(*[F.collect_set(df[c]).alias(f"_v{i}") for i, c in enumerate(small)]).first()
        if row is None:  # an aggregate without GROUP BY always returns one row
            raise RuntimeError("collect_set aggregate returned no row")
        for i, c in enumerate(small):
            result.columns[c].values = sorted(row[f"_v{i}"], key=lambda v: (str(type(v)), v))
    return result


def _is_complex(dtype: Any) -> bool:
    from pyspark.sql import types as T

    return isinstance(dtype, (T.ArrayType, T.MapType, T.StructType, T.BinaryType))
