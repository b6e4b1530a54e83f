"""Seeds in one DataFrame write instead of dbt-spark's rendered VALUES batches.

dbt-spark renders every cell into an ``insert ... values (cast(? as type), ...)``
batch: most of a seed's time goes into that rendering (docs/decisions/0025-seeds-
snapshots-and-clones.md). Here the rows dbt already parsed (its agate table: the same
type inference as every adapter) become one Arrow-backed DataFrame of strings, cast
to the seed's column types in Spark, and the materialization writes it with one
``create or replace table ... as select`` (one Iceberg commit).

A cast that turns a value into NULL (``'abc'`` as ``int``) fails the seed naming the
column and the value, where dbt-spark's casts would silently load NULL.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


class SeedError(ValueError):
    """A seed's rows do not fit its column types, or a column type is not Spark's."""


def quote_identifier(name: str) -> str:
    """``name`` as a Spark identifier (backticks, embedded ones doubled)."""
    return "`" + name.replace("`", "``") + "`"


def _text(value: Any) -> str | None:
    """A parsed seed cell as the string Spark casts back to its type."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, decimal.Decimal):
        return format(value, "f")  # never exponent notation: '1E+5' does not cast to bigint
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)


def check_type(spark: SparkSession, name: str, data_type: str) -> str:
    """``data_type`` if Spark parses it as a type; else a SeedError naming the column."""
    if any(ch in data_type for ch in ";`'\"") or "--" in data_type or "/*" in data_type:
        raise SeedError(f"column {name!r}: {data_type!r} is not a plain Spark SQL type")
    try:
        spark.sql(f"select cast(null as {data_type}) as c").schema  # noqa: B018 (analysis only)
    except Exception as exc:  # pyspark's ParseException and AnalysisException
        raise SeedError(
            f"column {name!r}: {data_type!r} is not a Spark SQL type ({type(exc).__name__}); "
            "fix column_types in the seed's config"
        ) from None
    return data_type


def seed_frame(
    spark: SparkSession,
    rows: Iterable[Sequence[Any]],
    columns: Sequence[tuple[str, str]],
) -> DataFrame:
    """The seed's rows as a DataFrame of ``columns`` (name, Spark type), values checked.

    Every column travels as a string (one Arrow batch from the driver) and is cast in
    Spark, as dbt-spark's ``cast(? as type)`` does; a non-null value that casts to NULL
    raises :class:`SeedError`.
    """
    import pandas as pd
    from pyspark.sql.types import StringType, StructField, StructType

    names = [name for name, _ in columns]
    if len(set(n.lower() for n in names)) != len(names):
        raise SeedError(f"the seed has duplicate column names: {names}")
    for name, data_type in columns:
        check_type(spark, name, data_type)
    raw = [f"_c{i}" for i in range(len(columns))]
    cells = [[_text(v) for v in row] for row in rows]
    frame = pd.DataFrame(cells, columns=raw, dtype=object) if cells else None
    schema = StructType([StructField(r, StringType()) for r in raw])
    strings = (
        spark.createDataFrame(frame, schema)
        if frame is not None
        else spark.createDataFrame([], schema)
    )
    typed = strings.selectExpr(
        *raw,
        *(
            f"cast({r} as {data_type}) as {quote_identifier(name)}"
            for r, (name, data_type) in zip(raw, columns, strict=True)
        ),
    )
    if cells:
        _refuse_lossy_casts(typed, raw, columns)
    return typed.select(*(quote_identifier(name) for name in names))


def _refuse_lossy_casts(
    typed: DataFrame, raw: list[str], columns: Sequence[tuple[str, str]]
) -> None:
    """One pass: the first value per column that its cast turned into NULL, if any."""
    probes = ", ".join(
        f"min(case when {r} is not null and {quote_identifier(name)} is null then {r} end)"
        for r, (name, _) in zip(raw, columns, strict=True)
    )
    (found,) = typed.selectExpr(f"array({probes}) as bad").collect()
    for value, (name, data_type) in zip(found.bad, columns, strict=True):
        if value is not None:
            raise SeedError(
                f"column {name!r}: value {value!r} is not a {data_type}; fix the CSV or "
                "set the column's type in column_types"
            )


def register_seed_view(
    spark: SparkSession,
    rows: Iterable[Sequence[Any]],
    columns: Sequence[tuple[str, str]],
    view: str,
) -> int:
    """Register the seed's typed rows as temporary view ``view``; the row count."""
    if not view.replace("_", "").isalnum():
        raise SeedError(f"{view!r} is not a plain view name")
    rows = list(rows)
    seed_frame(spark, rows, columns).createOrReplaceTempView(view)
    return len(rows)
