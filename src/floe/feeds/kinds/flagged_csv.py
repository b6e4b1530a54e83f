"""Feed kind ``flagged_csv``: full CSV extracts plus headerless change files with an op flag.

Layout (docs/feeds.md; the seed's insurance upsert feed):

* ``<landing>/<feed landing>/full/*.csv`` — a header row, then the declared columns;
* ``<landing>/<feed landing>/cdc/*.csv`` — no header; an op flag (U or I; D accepted)
  first, then the declared columns.

A file's load date is the ``yyyymmdd`` in its name (``cdc-load-20220702.csv``). The
files are small, so they are parsed in Python: each row keeps its exact position in
its file (``_row_in_file``), which orders two changes of one key in one file, and an
unparsable line is named by file and line number.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Callable, Sequence
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from floe.feeds.declarations import Feed, FeedError
from floe.feeds.files import LandedFile, landed_file, list_files
from floe.feeds.kinds.base import Batch, IngestContext, require_columns, spark_schema
from floe.feeds.ledger import FileCounts
from floe.runtime.jars import batch_timestamp

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


OPTIONS: frozenset[str] = frozenset()
DEFAULT_OP_COLUMN = "op"
OPS = ("I", "U", "D")
DATE_IN_NAME = re.compile(r"(\d{8})")
SUBFOLDERS = (("full", "full"), ("cdc", "cdc"))


def op_column(feed: Feed) -> str:
    return str(feed.option("op_column", DEFAULT_OP_COLUMN))


def validate(feed: Feed) -> None:
    for _, typ in require_columns(feed):
        _parser(typ, feed)


def _parser(typ: str, feed: Feed) -> Callable[[str], Any]:
    base = typ.lower().split("(")[0].strip()
    parsers: dict[str, Callable[[str], Any]] = {
        "int": int,
        "integer": int,
        "bigint": int,
        "smallint": int,
        "tinyint": int,
        "string": str,
        "date": date.fromisoformat,
        "timestamp": datetime.fromisoformat,
        "timestamp_ntz": datetime.fromisoformat,
        "double": float,
        "float": float,
        "decimal": Decimal,
        "boolean": lambda v: {"true": True, "false": False}[v.lower()],
    }
    if base not in parsers:
        raise FeedError(f"feed {feed.id} (flagged_csv): column type {typ!r} is not supported")
    return parsers[base]


def discover(feed: Feed, landing: Path) -> list[LandedFile]:
    """Full loads first, then CDC files, each in name (date) order."""
    found = []
    for folder, kind in SUBFOLDERS:
        for path in list_files(landing / feed.landing / folder, "*.csv", root=landing):
            match = DATE_IN_NAME.search(path.name)
            try:
                day = date(int(match[1][:4]), int(match[1][4:6]), int(match[1][6:]))  # type: ignore[index]
            except (TypeError, ValueError) as exc:
                raise FeedError(
                    f"{path}: the file name carries no yyyymmdd load date "
                    "(e.g. cdc-load-20220702.csv)"
                ) from exc
            found.append(landed_file(landing, path, _load_kind=kind, _load_date=day))
    return found


def _output_columns(feed: Feed) -> list[tuple[str, str]]:
    return [
        (op_column(feed), "string"),
        *require_columns(feed),
        ("_source_file", "string"),
        ("_row_in_file", "bigint"),
        ("_load_kind", "string"),
        ("_load_date", "date"),
    ]


def parse_file(feed: Feed, f: LandedFile) -> list[tuple]:
    """The rows of one file as tuples in ``_output_columns`` order (without _ingested_at)."""
    columns = require_columns(feed)
    header = [name for name, _ in columns]
    parsers = [_parser(typ, feed) for _, typ in columns]
    kind = f.attr("_load_kind")
    rows = []
    with f.path.open(encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle)
        if kind == "full":
            first = next(reader, None)
            if first is None or [c.strip() for c in first] != header:
                raise FeedError(f"{f.path}: header must be {','.join(header)}, got {first}")
        for position, record in enumerate(reader):
            line = reader.line_num
            op = None
            if kind == "cdc":
                if not record or record[0] not in OPS:
                    raise FeedError(f"{f.path}:{line}: first column must be one of {'/'.join(OPS)}")
                op, record = record[0], record[1:]
            if len(record) != len(columns):
                raise FeedError(
                    f"{f.path}:{line}: {len(record)} fields, want {len(columns)} ({','.join(header)})"
                )
            try:
                values = [
                    None if raw == "" else parse(raw)
                    for raw, parse in zip(record, parsers, strict=True)
                ]
            except (ValueError, KeyError, ArithmeticError) as exc:
                raise FeedError(f"{f.path}:{line}: {exc!r}") from exc
            rows.append((op, *values, f.key, position, kind, f.attr("_load_date")))
    return rows


def empty(spark: SparkSession, feed: Feed, ctx: IngestContext) -> DataFrame:
    from pyspark.sql import functions as F

    df = spark.createDataFrame([], spark_schema(_output_columns(feed)))
    return df.withColumn("_ingested_at", F.lit(None).cast("timestamp"))


def read(spark: SparkSession, feed: Feed, files: Sequence[LandedFile], ctx: IngestContext) -> Batch:

    per_file = {f.key: parse_file(feed, f) for f in files}
    rows = [row for f in files for row in per_file[f.key]]
    df = spark.createDataFrame(rows, spark_schema(_output_columns(feed)))
    counts = {key: FileCounts(len(r), len(r)) for key, r in per_file.items()}
    return Batch(
        rows=df.withColumn("_ingested_at", batch_timestamp(spark, ctx.ingested_at)), counts=counts
    )


PROVENANCE = {
    "_source_file": "Landed file the row came from, relative to the landing root (the ledger key).",
    "_row_in_file": "0-based position of the row in its file (orders two changes of one key).",
    "_load_kind": "full (full/ folder, header row) or cdc (cdc/ folder, op flag first).",
    "_load_date": "Load date, the yyyymmdd in the file name.",
    "_ingested_at": "When floe ingested the row; one value per ingest batch.",
    "_load_seq": "Load sequence of the ingest batch: increases in commit order across the warehouse (the marts' watermark, docs/reliability.md).",
}


def provenance_docs(feed: Feed) -> dict[str, str]:
    """Descriptions of the columns this kind adds to the raw table."""
    return {
        op_column(feed): f"Op flag of a change row ({'/'.join(OPS)}); NULL in a full load.",
        **PROVENANCE,
    }
