"""Schema-driven demo content: what a newly declared feed lands when it names no ``demo``.

A feed onboarded with a YAML entry (and, for a stream, its registry schema) gets
plausible, deterministic demo files from its declaration alone: values drawn by
column type (file-based kinds) or by registry schema (streams). Hand-written content
for the seed's feeds lives in :mod:`floe.generator.demo`.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from floe.feeds.kinds.csv_loads import Load, cell, op_column
from floe.feeds.kinds.dms import op_column as dms_op_column
from floe.feeds.kinds.dms import timestamp_column
from floe.feeds.kinds.stream import latest_schema

if TYPE_CHECKING:
    from floe.feeds.declarations import Feed
    from floe.generator.base import GenerateOptions

WORDS = ("alpha", "bravo", "delta", "echo", "golf", "hotel", "kilo", "lima", "oscar", "tango")
_DECIMAL = re.compile(r"^decimal\((\d+),\s*(\d+)\)$")


# --------------------------------------------------------------------------- Spark types


def arrow_type(spark_type: str) -> Any:
    """The pyarrow type a Spark SQL type reads back as (Parquet demo files)."""
    import pyarrow as pa

    t = spark_type.lower().strip()
    simple = {
        "tinyint": pa.int8(),
        "smallint": pa.int16(),
        "int": pa.int32(),
        "integer": pa.int32(),
        "bigint": pa.int64(),
        "long": pa.int64(),
        "float": pa.float32(),
        "double": pa.float64(),
        "boolean": pa.bool_(),
        "string": pa.string(),
        "binary": pa.binary(),
        "date": pa.date32(),
        "timestamp": pa.timestamp("us", tz="UTC"),
        "timestamp_ntz": pa.timestamp("us"),
    }
    if t in simple:
        return simple[t]
    if match := _DECIMAL.match(t):
        return pa.decimal128(int(match[1]), int(match[2]))
    raise ValueError(f"no demo Parquet type for Spark type {spark_type!r}")


def value_for(rng: random.Random, spark_type: str, day: date, i: int) -> Any:
    """A plausible Python value of ``spark_type`` (deterministic in ``rng``)."""
    t = spark_type.lower().strip()
    if t in ("tinyint", "smallint"):
        return rng.randrange(100)
    if t in ("int", "integer", "bigint", "long"):
        return rng.randrange(1, 10**5)
    if t in ("float", "double"):
        return round(rng.uniform(0, 1000), 2)
    if t == "boolean":
        return rng.random() < 0.5
    if t == "date":
        return day - timedelta(days=rng.randrange(365))
    if t in ("timestamp", "timestamp_ntz"):
        return datetime.combine(day, time(rng.randrange(24), rng.randrange(60)))
    if match := _DECIMAL.match(t):
        scale = int(match[2])
        return Decimal(rng.randrange(10**5)).scaleb(-scale)
    return f"{rng.choice(WORDS)}-{i}"


def key_value(spark_type: str, n: int) -> Any:
    """The ``n``-th key of a key column (integers 1.., else ``k<n>``)."""
    t = spark_type.lower()
    if t in ("int", "integer", "bigint", "long", "smallint", "tinyint"):
        return n
    return f"k{n:06d}"


@dataclass
class _Table:
    """A live table simulated day by day: keyed rows, inserts, updates, deletes."""

    feed: Feed
    opts: GenerateOptions
    salt: str
    rng: random.Random = field(init=False)
    rows: dict[tuple, dict] = field(default_factory=dict)
    next_key: int = 1

    def __post_init__(self) -> None:
        self.rng = self.opts.rng(f"synth:{self.salt}:{self.feed.id}")
        self.columns = self.feed.column_types()
        self.keys = list(self.feed.key) or [self.columns[0][0]]

    def new_row(self, day: date) -> dict:
        types = dict(self.columns)
        row = {}
        for name, typ in self.columns:
            row[name] = (
                key_value(types[name], self.next_key)
                if name in self.keys
                else value_for(self.rng, typ, day, self.next_key)
            )
        self.next_key += 1
        self.rows[tuple(row[k] for k in self.keys)] = row
        return row

    def change(self, day: date) -> dict | None:
        attrs = [(n, t) for n, t in self.columns if n not in self.keys]
        if not self.rows or not attrs:
            return None
        key = self.rng.choice(sorted(self.rows))
        name, typ = self.rng.choice(attrs)
        self.rows[key] = {**self.rows[key], name: value_for(self.rng, typ, day, self.next_key)}
        return self.rows[key]

    def delete(self) -> dict | None:
        if len(self.rows) < 2:
            return None
        key = self.rng.choice(sorted(self.rows))
        return self.rows.pop(key)

    def initial(self, day: date) -> list[dict]:
        for _ in range(max(10, self.opts.scale // 20)):
            self.new_row(day)
        return [dict(r) for _, r in sorted(self.rows.items())]

    def changes(self, day: date) -> list[tuple[str, dict]]:
        """A day's changes: a few updates, an insert, a delete (op, row)."""
        out: list[tuple[str, dict]] = []
        for _ in range(max(1, len(self.rows) // 20)):
            row = self.change(day)
            if row is not None:
                out.append(("U", dict(row)))
        out.append(("I", dict(self.new_row(day))))
        gone = self.delete()
        if gone is not None:
            out.append(("D", gone))
        return out


def _text(value: Any) -> str:
    return cell(value)


def csv_loads_demo(feed: Feed, opts: GenerateOptions) -> list[Any]:
    """Day 0 a full extract; later days change loads flagged I/U/D."""
    table = _Table(feed, opts, "csv_loads")
    status = op_column(feed)
    loads = []
    for index, day in enumerate(opts.load_dates()):
        if index == 0:
            rows = [{k: _text(v) for k, v in r.items()} for r in table.initial(day)]
            loads.append(Load(day, "full", rows))
        else:
            rows = [
                {**{k: _text(v) for k, v in r.items()}, status: op} for op, r in table.changes(day)
            ]
            loads.append(Load(day, "changes", rows))
    return loads


@dataclass(frozen=True)
class DmsDay:
    """One DMS file's content: full load or CDC, capture time, columns and rows."""

    full: bool
    load_date: date
    captured: datetime
    columns: list[tuple[str, str]]
    rows: list[dict]


class _DmsSynth:
    def __init__(self, feed: Feed, opts: GenerateOptions) -> None:
        self.feed, self.opts = feed, opts

    def days(self) -> Iterator[DmsDay]:
        table = _Table(self.feed, self.opts, "dms")
        op, ts = dms_op_column(self.feed), timestamp_column(self.feed)
        for index, day in enumerate(self.opts.load_dates()):
            at = datetime.combine(day, time(1, 0))
            if index == 0:
                rows = [{**r, ts: at} for r in table.initial(day)]
                yield DmsDay(True, day, at, table.columns, rows)
            else:
                rows = [{op: o, **r, ts: at} for o, r in table.changes(day)]
                yield DmsDay(False, day, at, table.columns, rows)


def dms_demo(feed: Feed, opts: GenerateOptions) -> _DmsSynth:
    return _DmsSynth(feed, opts)


class _FlaggedSynth:
    def __init__(self, feed: Feed, opts: GenerateOptions) -> None:
        self.feed, self.opts = feed, opts

    def days(self) -> Iterator[tuple[date, bool, list[list[str]]]]:
        table = _Table(self.feed, self.opts, "flagged_csv")
        names = [n for n, _ in table.columns]
        for index, day in enumerate(self.opts.load_dates()):
            if index == 0:
                yield day, True, [[_text(r[n]) for n in names] for r in table.initial(day)]
            else:
                changes = [(o, r) for o, r in table.changes(day) if o != "D"]
                yield day, False, [[o, *(_text(r[n]) for n in names)] for o, r in changes]


def flagged_csv_demo(feed: Feed, opts: GenerateOptions) -> _FlaggedSynth:
    return _FlaggedSynth(feed, opts)


def reference_demo(feed: Feed, opts: GenerateOptions) -> list[tuple[date, list[list[str]]]]:
    """One full extract per day, each changing one row."""
    table = _Table(feed, opts, "reference")
    names = [n for n, _ in table.columns]
    extracts = []
    for index, day in enumerate(opts.load_dates()):
        if index == 0:
            table.initial(day)
        else:
            table.change(day)
        extracts.append(
            (day, [[_text(r[n]) for n in names] for _, r in sorted(table.rows.items())])
        )
    return extracts


# --------------------------------------------------------------------------- registry schemas


@dataclass(frozen=True)
class StreamDemo:
    """Demo content of a stream: a record maker and how to break a record's payload.

    ``make`` is a factory returning ``record(rng, i, ts, version_number) -> dict``
    (a factory, so stateful content such as a CDC table starts fresh each run).
    ``violation_field`` is set to a string to violate a JSON Schema;
    ``cast_failure`` is ``(field, value)``: valid under the schema, too big or
    malformed for the raw table's Spark type.
    """

    make: Callable[[], Callable[[random.Random, int, datetime, int], Any]]
    violation_field: str | None = None
    cast_failure: tuple[str, Any] | None = None

    def __call__(self, feed: Feed, opts: GenerateOptions) -> StreamDemo:
        """Demo content is called with the feed and options; this one needs neither."""
        return self


def stream_demo(feed: Feed, opts: GenerateOptions) -> StreamDemo:
    """Records drawn from the latest version of the feed's registry schema."""
    data_format, text = latest_schema(feed, opts.project())
    schema = json.loads(text)
    if data_format == "AVRO":
        return StreamDemo(lambda: lambda rng, i, ts, v: avro_value(rng, schema, {}, i))
    integer = _first_integer_property(schema)
    return StreamDemo(
        lambda: lambda rng, i, ts, v: json_value(rng, schema, schema, i),
        violation_field=integer,
        cast_failure=(integer, 2**70) if integer else None,
    )


def _first_integer_property(schema: dict) -> str | None:
    required = set(schema.get("required") or [])
    for name, prop in (schema.get("properties") or {}).items():
        if isinstance(prop, dict) and prop.get("type") == "integer" and name in required:
            return str(name)
    return None


def avro_value(rng: random.Random, schema: Any, named: dict[str, Any], i: int) -> Any:
    """A random value of an Avro schema (records, enums, unions, arrays, maps, logical types)."""
    if isinstance(schema, str):
        if schema in named:
            return avro_value(rng, named[schema], named, i)
        return _avro_primitive(rng, schema, i)
    if isinstance(schema, list):
        branches = [b for b in schema if b != "null"]
        if "null" in schema and (not branches or rng.random() < 0.2):
            return None
        return avro_value(rng, branches[0], named, i)
    kind = schema.get("type")
    logical = schema.get("logicalType")
    if logical == "date":
        return date(2022, 7, 1) + timedelta(days=rng.randrange(365))
    if logical in ("timestamp-millis", "timestamp-micros"):
        return datetime(2022, 7, 1) + timedelta(seconds=rng.randrange(86400 * 30))
    if kind in ("record", "error"):
        named[schema["name"]] = schema
        return {f["name"]: avro_value(rng, f["type"], named, i) for f in schema["fields"]}
    if kind == "enum":
        named[schema["name"]] = schema
        return rng.choice(schema["symbols"])
    if kind == "fixed":
        named[schema["name"]] = schema
        return bytes(rng.randrange(256) for _ in range(schema["size"]))
    if kind == "array":
        return [avro_value(rng, schema["items"], named, i) for _ in range(rng.randrange(3))]
    if kind == "map":
        return {
            f"k{n}": avro_value(rng, schema["values"], named, i) for n in range(rng.randrange(3))
        }
    return avro_value(rng, kind, named, i)


def _avro_primitive(rng: random.Random, name: str, i: int) -> Any:
    if name == "null":
        return None
    if name == "boolean":
        return rng.random() < 0.5
    if name in ("int", "long"):
        return rng.randrange(1, 10**5)
    if name in ("float", "double"):
        return round(rng.uniform(0, 1000), 2)
    if name == "bytes":
        return bytes(rng.randrange(256) for _ in range(4))
    return f"{rng.choice(WORDS)}-{i}"


def json_value(rng: random.Random, schema: Any, root: dict, i: int) -> Any:
    """A random instance of a JSON Schema (objects, arrays, enums, formats, ``$ref``)."""
    if not isinstance(schema, dict):
        return f"{rng.choice(WORDS)}-{i}"
    if "$ref" in schema:
        target: Any = root
        for part in schema["$ref"].lstrip("#/").split("/"):
            target = target[part]
        return json_value(rng, target, root, i)
    if "enum" in schema:
        return rng.choice(schema["enum"])
    if "const" in schema:
        return schema["const"]
    for combinator in ("oneOf", "anyOf", "allOf"):
        if combinator in schema:
            return json_value(rng, schema[combinator][0], root, i)
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        required = set(schema.get("required") or [])
        return {
            name: json_value(rng, prop, root, i)
            for name, prop in (schema.get("properties") or {}).items()
            if name in required or rng.random() < 0.7
        }
    if kind == "array":
        return [json_value(rng, schema.get("items", {}), root, i) for _ in range(rng.randrange(3))]
    if kind == "integer":
        low = int(schema.get("minimum", 0))
        return rng.randrange(low, max(low + 1, int(schema.get("maximum", low + 10**5))))
    if kind == "number":
        return round(
            rng.uniform(float(schema.get("minimum", 0)), float(schema.get("maximum", 1000))), 2
        )
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "null":
        return None
    fmt = schema.get("format")
    if fmt == "date":
        return (date(2022, 7, 1) + timedelta(days=rng.randrange(365))).isoformat()
    if fmt == "date-time":
        return (
            datetime(2022, 7, 1) + timedelta(seconds=rng.randrange(86400 * 30))
        ).isoformat() + "Z"
    length = int(schema.get("minLength", 0))
    text = f"{rng.choice(WORDS)}-{i}"
    return (
        text + "x" * max(0, length - len(text)) if length else text[: schema.get("maxLength", 64)]
    )
