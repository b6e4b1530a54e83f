"""Seeds in one DataFrame write instead of dbt-spark's rendered VALUES batches.

dbt-spark parses the CSV into an agate table (pure-Python type inference of every
cell) and renders every cell into ``insert ... values (cast(? as type), ...)``
batches: a 20,000-row seed took minutes. Here (docs/decisions/0025-seeds-and-snapshots.md):

- the CSV is read with Python's ``csv`` module, as agate reads it;
- each column's type follows dbt's rules (agate's type tester, then the adapter's
  ``convert_type``: bigint/double/date/timestamp/boolean/string), decided from the
  column's *distinct* values: plain integers, decimals, ISO dates, ``YYYY-MM-DD
  HH:MM:SS`` timestamps and ``true``/``false`` by pattern, anything else by agate's own
  tester on those distinct values; ``column_types`` entries are read as text and cast,
  as dbt does;
- the rows travel to Spark as one Arrow-backed DataFrame: columns typed by their plain
  shape as values of their type (converted exactly here), the others as text cast
  there, where a value its column's type cannot hold (``'x1'`` as ``int``) fails the
  write naming column and value (dbt-spark's cast would load NULL)
  (docs/decisions/0049-seed-names-config-checks-and-inference-sample.md).
"""

from __future__ import annotations

import csv
import datetime as dt
import decimal
import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

NULLS = frozenset({"", "null"})  # agate_helper's null values, after strip().lower()
_INT = re.compile(r"-?[0-9]+")
_DEC = re.compile(r"-?[0-9]+\.[0-9]+")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_DATETIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}")
_BOOL = frozenset({"true", "false"})
# Distinct values of a column agate tests first (_agate_type): a sample typed Text decides.
AGATE_SAMPLE = 256
# Rows of the agate table dbt keeps for `dbt seed --show` (it prints the first few).
SHOW_ROWS = 20


# Spark SQL's unquoted identifier (SqlBaseLexer IDENTIFIER, not all digits): what a column
# name must be when the seed says `quote_columns: false`, as dbt then pastes it unquoted.
_PLAIN_IDENTIFIER = re.compile(r"[A-Za-z0-9_]*[A-Za-z_][A-Za-z0-9_]*")


class SeedError(ValueError):
    """A seed's CSV or column types cannot be loaded as they are."""


class SeedConfigError(SeedError):
    """A seed's config cannot be used to read it (dbt reports these as compilation errors)."""


def check_delimiter(delimiter: object) -> str:
    """The seed's CSV delimiter: dbt's default ``,`` when unset, else exactly one character.

    dbt refuses anything else when it reads the CSV (Python's csv module: '"delimiter"
    must be a 1-character string'), before any SQL runs.
    """
    if delimiter is None:
        return ","
    if not isinstance(delimiter, str) or len(delimiter) != 1:
        raise SeedConfigError(
            f'"delimiter" must be a 1-character string, the seed\'s config has {delimiter!r}; '
            'set `delimiter` to one character, or remove it for ","'
        )
    return delimiter


def check_unquoted_names(names: Sequence[str], delimiter: str) -> None:
    """Refuse column names that Spark cannot read unquoted (``quote_columns: false``).

    dbt pastes such names into the table's DDL as they are, where Spark fails with a
    syntax error; floe never pastes them, so it refuses them by the same rule here.
    A header that was split with the wrong delimiter shows up this way.
    """
    for name in names:
        if not _PLAIN_IDENTIFIER.fullmatch(name):
            raise SeedConfigError(
                f"syntax error: column name {name!r} is not a plain Spark SQL identifier, "
                f"and the seed has `quote_columns: false`. Check the seed's `delimiter` "
                f"(the header was split at {delimiter!r}) or set `quote_columns: true`"
            )


@dataclass
class SeedColumns:
    """A parsed seed: column names, Spark types, raw cells (None for null) per column."""

    names: list[str]
    types: list[str]
    cells: list[list[str | None]]
    # per column: raw text -> the text Spark casts (agate-parsed values of odd shapes)
    rewrites: list[dict[str, str | None] | None]
    # per column: typed by the plain-shape patterns (_fast_type), so every value converts
    # exactly in Python (native_values); None: no column is
    patterned: list[bool] | None = None

    @property
    def rows(self) -> int:
        return len(self.cells[0]) if self.cells else 0


def _is_null(value: str) -> bool:
    return value.strip().lower() in NULLS


def _text(value: Any) -> str | None:
    """An agate-parsed value as the string Spark casts back to its type."""
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


def _valid(parse: Callable[[str], Any], values: Sequence[str]) -> bool:
    try:
        for value in values:
            parse(value)
    except ValueError:
        return False
    return True


def _fast_type(distinct: Sequence[str]) -> str | None:
    """dbt's type of a column whose distinct values all have one plain shape, else None."""
    if not distinct:
        return None  # all null: agate's tester decides
    if all(_INT.fullmatch(v) for v in distinct):
        return "bigint"
    if all(_INT.fullmatch(v) or _DEC.fullmatch(v) for v in distinct):
        return "double"  # some value has decimal places (agate MaxPrecision > 0)
    if all(_DATE.fullmatch(v) for v in distinct) and _valid(dt.date.fromisoformat, distinct):
        return "date"
    if all(_DATETIME.fullmatch(v) for v in distinct) and _valid(
        dt.datetime.fromisoformat, distinct
    ):
        return "timestamp"
    if all(v in _BOOL for v in distinct):
        return "boolean"
    return None


def _agate_type(
    name: str, distinct: Sequence[str], convert_type: Callable[[Any, int], str]
) -> tuple[str, dict[str, str | None] | None]:
    """dbt's own inference on a column's distinct values: its type, and how values read."""
    import agate  # type: ignore[import-untyped]
    from dbt_common.clients import agate_helper

    def tested(values: Sequence[str]) -> Any:
        rows: list[list[str | None]] = [[v] for v in values] or [[None]]
        return agate.Table(rows, [name], column_types=agate_helper.DEFAULT_TYPE_TESTER)

    if len(distinct) > AGATE_SAMPLE:
        # agate keeps a type only while every value passes its test, and Text passes all:
        # values that are Text already make the whole column Text. A high-cardinality text
        # column (names, ids) is decided on a sample instead of an agate pass over all.
        step = len(distinct) / AGATE_SAMPLE
        sample = tested([distinct[int(i * step)] for i in range(AGATE_SAMPLE)])
        if isinstance(sample.column_types[0], agate.data_types.Text):
            return convert_type(sample, 0), None
    table = tested(distinct)
    data_type = convert_type(table, 0)
    column_type = table.column_types[0]
    if isinstance(column_type, agate.data_types.Text):
        return data_type, None
    return data_type, {raw: _text(column_type.cast(raw)) for raw in distinct}


def read_seed(
    path: Path,
    *,
    delimiter: object,
    column_types: Mapping[str, str],
    convert_type: Callable[[Any, int], str],
    quote_columns: bool = True,
) -> SeedColumns:
    """The seed CSV at ``path`` with dbt's column names and types (see module doc).

    ``delimiter`` is the seed's config as given (None: dbt's ``,``); with
    ``quote_columns`` false every column name must be a plain identifier.
    """
    delimiter = check_delimiter(delimiter)
    with path.open(encoding="utf-8", newline="") as handle:
        if handle.read(1) != "\ufeff":
            handle.seek(0)
        reader = csv.reader(handle, delimiter=delimiter)
        header = next(reader, None)
        if not header:
            raise SeedError(f"{path}: no header row")
        rows = list(reader)
    names = [n.strip() for n in header]
    if any(not n for n in names) or len({n.lower() for n in names}) != len(names):
        raise SeedError(f"{path}: blank or repeated column names in the header: {header}")
    if not quote_columns:
        check_unquoted_names(names, delimiter)
    width = len(names)
    for number, row in enumerate(rows, start=2):
        if len(row) != width:
            raise SeedError(f"{path}, line {number}: {len(row)} values, the header has {width}")
    cells: list[list[str | None]] = (
        [list(col) for col in zip(*rows, strict=True)] if rows else [[] for _ in names]
    )
    types: list[str] = []
    rewrites: list[dict[str, str | None] | None] = []
    patterned: list[bool] = []
    for index, (name, raw) in enumerate(zip(names, cells, strict=True)):
        # null spellings are found among the distinct values, not tested per cell
        values = {v for v in raw if v is not None}
        # (inline: a null spelling has at most 4 characters unless padded)
        short = {v for v in values if len(v) <= 4 or v[:1].isspace() or v[-1:].isspace()}
        nulls = {v for v in short if _is_null(v)}
        if nulls:
            cells[index] = [None if v in nulls else v for v in raw]
            values -= nulls
        if name in column_types:
            types.append(column_types[name])
            rewrites.append(None)
            patterned.append(False)
            continue
        distinct = list(values)  # any order: the type does not depend on it
        fast = _fast_type(distinct)
        patterned.append(fast is not None)
        if fast is not None:
            types.append(fast)
            rewrites.append(None)
        else:
            data_type, rewrite = _agate_type(name, distinct, convert_type)
            types.append(data_type)
            rewrites.append(rewrite)
    return SeedColumns(names, types, cells, rewrites, patterned)


def show_table(seed: SeedColumns) -> Any:
    """A small agate table of the seed's first rows, for `dbt seed --show`."""
    import agate

    rows = [list(r) for r in zip(*(c[:SHOW_ROWS] for c in seed.cells), strict=True)]
    return agate.Table(rows, seed.names, [agate.Text() for _ in seed.names])


_INT64 = (-(2**63), 2**63 - 1)
_NATIVE: dict[str, Callable[[str], Any]] = {
    "bigint": int,
    "double": float,  # correctly rounded, as Spark's cast of the same text
    "date": dt.date.fromisoformat,
    "boolean": lambda v: v == "true",
}


def native_values(data_type: str, cells: Sequence[str | None]) -> list[Any] | None:
    """A patterned column's values as Python values of its type, or None where only
    Spark's cast can judge them (timestamps: the session time zone; out-of-range
    integers: the cast names the value)."""
    convert = _NATIVE.get(data_type)
    if convert is None:
        return None
    values = [None if v is None else convert(v) for v in cells]
    if data_type == "bigint":
        present = [v for v in values if v is not None]
        if present and (min(present) < _INT64[0] or max(present) > _INT64[1]):
            return None
    return values


def seed_frame(spark: SparkSession, seed: SeedColumns) -> DataFrame:
    """The seed as a DataFrame of its types; a value its type cannot hold fails the write.

    Columns typed by their plain shapes travel as values of their type (as a DataFrame
    written from pandas would); the others travel as text and are cast in Spark, where
    a value the cast turns into NULL fails the write naming column and value.
    """
    import pandas as pd  # type: ignore[import-untyped]
    from pyspark.sql import functions as F
    from pyspark.sql.types import (
        BooleanType,
        DataType,
        DateType,
        DoubleType,
        LongType,
        StringType,
        StructField,
        StructType,
    )

    spark_types: dict[str, DataType] = {
        "bigint": LongType(),
        "double": DoubleType(),
        "date": DateType(),
        "boolean": BooleanType(),
    }
    raw = [f"_c{i}" for i in range(len(seed.names))]
    patterned = seed.patterned or [False] * len(raw)
    columns: dict[str, list[Any]] = {}
    native: set[str] = set()
    for r, col, rewrite, data_type, plain in zip(
        raw, seed.cells, seed.rewrites, seed.types, patterned, strict=True
    ):
        values = native_values(data_type, col) if plain and rewrite is None else None
        if values is not None:
            columns[r] = values
            native.add(r)
        else:
            columns[r] = (
                col if rewrite is None else [None if v is None else rewrite[v] for v in col]
            )
    schema = StructType(
        [
            StructField(r, spark_types[t] if r in native else StringType())
            for r, t in zip(raw, seed.types, strict=True)
        ]
    )
    if seed.rows:
        strings = spark.createDataFrame(pd.DataFrame(columns, dtype=object), schema)
    else:
        strings = spark.createDataFrame([], schema)
    typed = []
    for r, name, data_type in zip(raw, seed.names, seed.types, strict=True):
        if r in native:
            typed.append(F.col(r).alias(name))
            continue
        try:
            value = F.col(r).cast(data_type)
        except Exception as exc:  # pyspark's ParseException
            raise SeedError(
                f"column {name!r}: {data_type!r} is not a Spark SQL type; fix column_types "
                f"in the seed's config ({type(exc).__name__})"
            ) from None
        message = F.concat(
            F.lit(f"column {name!r}: value '"),
            F.col(r),
            F.lit(f"' is not a {data_type}; fix the CSV or the column's column_types"),
        )
        checked = F.when(F.col(r).isNotNull() & value.isNull(), F.raise_error(message))
        typed.append(checked.otherwise(value).cast(data_type).alias(name))
    return strings.select(*typed)


def seed_view_name(relation: str) -> str:
    """The temporary view a seed's rows are written from: a plain name for any seed name
    (``seed.with.dots``), distinct per relation."""
    digest = hashlib.sha1(relation.encode("utf-8")).hexdigest()[:16]
    return f"floe_seed_{digest}"


def register_seed_view(spark: SparkSession, seed: SeedColumns, view: str) -> None:
    """Register the seed's typed rows as temporary view ``view``."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", view):
        raise SeedError(f"{view!r} is not a plain view name")
    try:
        frame = seed_frame(spark, seed)
    except SeedError:
        raise
    except Exception as exc:  # AnalysisException: e.g. a type Spark cannot cast to
        raise SeedError(f"{type(exc).__name__}: {exc}") from None
    frame.createOrReplaceTempView(view)
