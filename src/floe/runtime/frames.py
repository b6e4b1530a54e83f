"""A few driver-side rows as a DataFrame that Spark reads without a Python worker.

PySpark 3.5's ``createDataFrame(list_of_tuples, schema)`` parallelizes the list as a Python
RDD: every action on it (the ledger's append of a feed's landed files, a temporary view of
keys for a DELETE, a check run's metrics) schedules tasks that each hand pickled rows to a
Python worker, and the first in a process starts the workers. A pandas frame goes through
Arrow instead and arrives as a ``LocalRelation``, read by the JVM alone: 0.12-0.19 s
against 0.36-0.80 s for two rows counted (docs/runtime.md, "Driver-side rows").

Values keep ``createDataFrame``'s meaning: strings, integers, doubles and booleans go to
Arrow as they are; a timestamp or date travels as the number ``createDataFrame`` would
have stored (``TimestampType().toInternal``: a naive ``datetime`` in the machine's time
zone, an aware one at its instant) and is turned back by Spark. Any other type keeps the
Python RDD.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

_PLAIN = ("string", "bigint", "int", "smallint", "tinyint", "double", "boolean")
# type -> (the Arrow column's type, Spark's function from it back to the type)
_AS_NUMBER = {"timestamp": ("bigint", "timestamp_micros"), "date": ("int", "date_from_unix_date")}


def local_frame(spark: SparkSession, rows: Sequence[Sequence[Any]], schema: str) -> DataFrame:
    """``rows`` (tuples in ``schema``'s column order; ``schema`` a DDL string) as a
    one-partition DataFrame: a ``LocalRelation`` when every column's type allows it (see
    the module), else ``createDataFrame``'s Python RDD."""
    import pandas as pd  # type: ignore[import-untyped]
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructField, StructType, _parse_datatype_string

    struct = _parse_datatype_string(schema)
    if not isinstance(struct, StructType):
        raise ValueError(f"local_frame: {schema!r} is not a list of columns")
    kinds = [f.dataType.simpleString() for f in struct.fields]
    if not all(k in _PLAIN or k in _AS_NUMBER for k in kinds):
        return spark.createDataFrame(list(rows), struct).coalesce(1)
    names = struct.fieldNames()
    numbered = {
        i: struct.fields[i].dataType.toInternal for i, k in enumerate(kinds) if k in _AS_NUMBER
    }
    # What Arrow carries: timestamps and dates as the numbers createDataFrame stores.
    wire = StructType(
        [
            StructField(f.name, _parse_datatype_string(_AS_NUMBER[k][0])) if k in _AS_NUMBER else f
            for f, k in zip(struct.fields, kinds, strict=True)
        ]
    )
    values = [[numbered[i](v) if i in numbered else v for i, v in enumerate(r)] for r in rows]
    # No rows: Arrow with no batch gives an RDD scan, so one row of NULLs is sent and cut
    # by limit(0) below, which the optimizer folds into an empty local relation.
    # object: an integer column with a NULL stays integers (pandas would make it float).
    frame = pd.DataFrame.from_records(values or [[None] * len(names)], columns=names).astype(object)
    df = spark.createDataFrame(frame, wire)
    if numbered:
        df = df.select(
            *[
                getattr(F, _AS_NUMBER[k][1])(F.col(n)).alias(n) if k in _AS_NUMBER else F.col(n)
                for n, k in zip(names, kinds, strict=True)
            ]
        )
    if not values:
        return df.limit(0)
    # One partition: a local relation is split over the default parallelism, and each
    # part appended to Iceberg would be a data file of its own (four for a few rows).
    return df.coalesce(1)
