"""Feed kind ``csv_loads``: date-partitioned CSV loads, each with a ``_manifest.json``.

Layout (docs/feeds.md): ``<landing>/<feed landing>/load_date=YYYY-MM-DD/{_manifest.json,
*.csv}``. The manifest declares the load's kind: ``{"kind": "full"}`` (a full extract)
or ``{"kind": "changes"}`` (change rows flagged I/U/D in the feed's ``op_column``).
Every CSV file has a header: the declared columns in order, then optionally the op
column (required in change loads).

Raw rows keep the declared columns, typed, plus ``<op_column>``, ``_source_file``
(the ledger key), ``_load_kind``, ``_load_date`` and ``_ingested_at``. A malformed
manifest, header, value or flag fails the read naming the file (nothing is skipped).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from floe.feeds.declarations import Feed, FeedError
from floe.feeds.files import (
    LandedFile,
    check_counts,
    landed_file,
    list_files,
    spark_path,
    with_file_columns,
)
from floe.feeds.kinds.base import Batch, IngestContext, require_columns, spark_schema
from floe.feeds.ledger import FileCounts
from floe.runtime.jars import batch_timestamp

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


OPTIONS = frozenset({"timestamp_format"})
LOAD_KINDS = ("full", "changes")
OPS = ("I", "U", "D")
DEFAULT_OP_COLUMN = "rec_source_status"
DEFAULT_TIMESTAMP_FORMAT = "yyyy-MM-dd[ ]['T']HH:mm:ss[.SSSSSS][XXX]"
MANIFEST = "_manifest.json"
FILE_ATTRS = (("_load_kind", "string"), ("_load_date", "date"))


def op_column(feed: Feed) -> str:
    return str(feed.option("op_column", DEFAULT_OP_COLUMN))


def validate(feed: Feed) -> None:
    names = [name for name, _ in require_columns(feed)]
    for key in feed.key:
        if key not in names:
            raise FeedError(f"feed {feed.id}: key column {key!r} is not a declared column")
    if op_column(feed) in names:
        raise FeedError(
            f"feed {feed.id}: the op column {op_column(feed)!r} is added by the kind; "
            "do not declare it among the columns"
        )


# --------------------------------------------------------------------------- discovery


def _read_manifest(folder: Path) -> str:
    manifest = folder / MANIFEST
    if not manifest.is_file():
        raise FeedError(
            f"{manifest}: missing. Every load declares its kind beside its files: "
            '{"kind": "full"} or {"kind": "changes"}'
        )
    try:
        kind = json.loads(manifest.read_text()).get("kind")
    except (json.JSONDecodeError, AttributeError) as exc:
        raise FeedError(f"{manifest}: not a JSON object ({exc})") from exc
    if kind not in LOAD_KINDS:
        raise FeedError(f"{manifest}: kind must be one of {', '.join(LOAD_KINDS)}, got {kind!r}")
    return str(kind)


def discover(feed: Feed, landing: Path) -> list[LandedFile]:
    """Every CSV file of every load, oldest load first; attributes ``_load_date``, ``_load_kind``."""
    root = landing / feed.landing
    files: list[LandedFile] = []
    if not root.is_dir():
        return files
    for folder in sorted(p for p in root.glob("load_date=*") if p.is_dir()):
        raw_date = folder.name.split("=", 1)[1]
        try:
            load_date = date.fromisoformat(raw_date)
        except ValueError as exc:
            raise FeedError(
                f"{folder}: '{raw_date}' is not a date (want load_date=YYYY-MM-DD)"
            ) from exc
        kind = _read_manifest(folder)
        csvs = list_files(folder, "*.csv", root=landing)
        if kind == "full" and not csvs:
            raise FeedError(
                f"{folder}: the manifest declares a full load but no *.csv file is there; "
                "a full load with no rows would delete every row of the table"
            )
        files.extend(landed_file(landing, p, _load_date=load_date, _load_kind=kind) for p in csvs)
    return files


# --------------------------------------------------------------------------- reading


def _header(path: Path) -> list[str]:
    with path.open("r", encoding="utf-8", newline="") as handle:
        first = handle.readline()
    return [c.strip() for c in first.rstrip("\r\n").split(",")] if first else []


def _output_columns(feed: Feed) -> list[tuple[str, str]]:
    return [
        *require_columns(feed),
        (op_column(feed), "string"),
        ("_source_file", "string"),
        *FILE_ATTRS,
        ("_ingested_at", "timestamp"),
    ]


def empty(spark: SparkSession, feed: Feed, ctx: IngestContext) -> DataFrame:
    return spark.createDataFrame([], spark_schema(_output_columns(feed)))


def read(spark: SparkSession, feed: Feed, files: Sequence[LandedFile], ctx: IngestContext) -> Batch:
    """Typed rows of ``files`` with provenance; headers checked per file, values per row."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType, StructField, StructType

    columns = require_columns(feed)
    required = [name for name, _ in columns]
    status = op_column(feed)
    schema = spark_schema(columns)
    groups: dict[tuple[str, ...], list[LandedFile]] = defaultdict(list)
    for lf in files:
        header = _header(lf.path)
        extra = [c for c in header if c not in required]
        if header[: len(required)] != required or any(c != status for c in extra):
            raise FeedError(
                f"{lf.path}: header {','.join(header) or '(empty file)'} does not match the "
                f"contract {','.join(required)}[,{status}]"
            )
        if lf.attr("_load_kind") == "changes" and status not in header:
            raise FeedError(f"{lf.path}: a change load needs a {status} column")
        groups[tuple(header)].append(lf)

    frames = []
    for columns_in_file, group in groups.items():
        fields = list(schema.fields) + [
            StructField(c, StringType()) for c in columns_in_file[len(required) :]
        ]
        read_schema = StructType([*fields, StructField("_corrupt_record", StringType())])
        df = (
            spark.read.schema(read_schema)
            .option("header", True)
            .option("mode", "PERMISSIVE")
            .option("columnNameOfCorruptRecord", "_corrupt_record")
            .option("timestampFormat", feed.option("timestamp_format", DEFAULT_TIMESTAMP_FORMAT))
            .csv([spark_path(lf.path) for lf in group])
        )
        if status not in columns_in_file:
            df = df.withColumn(status, F.lit(None).cast("string"))
        frames.append(with_file_columns(df, spark, group, FILE_ATTRS))
    df = frames[0]
    for other in frames[1:]:
        df = df.unionByName(other)
    counts = _validate(df, required, status)
    rows = df.select(
        *required,
        status,
        "_source_file",
        "_load_kind",
        "_load_date",
        batch_timestamp(df.sparkSession, ctx.ingested_at).alias("_ingested_at"),
    )
    return Batch(rows=rows, counts=counts)


def _validate(df: DataFrame, data_columns: list[str], status: str) -> dict[str, FileCounts]:
    """One aggregation per batch: rows per file, unparsable rows and bad flags (named per file)."""
    from pyspark.sql import functions as F

    bad_status = (F.col("_load_kind") == "changes") & (
        F.col(status).isNull() | ~F.col(status).isin(*OPS)
    )
    # Spark parses only the columns a query reads: read them all, or a bad value in an
    # unread column would go unnoticed.
    stats = (
        df.groupBy("_source_file")
        .agg(
            F.count(F.lit(1)).alias("rows"),
            F.sum(F.xxhash64(*data_columns)).alias("_checksum"),
            F.count(F.col("_corrupt_record")).alias("unparsable"),
            F.sum(F.when(bad_status, 1).otherwise(0)).alias("bad_status"),
            F.first(F.col("_corrupt_record"), ignorenulls=True).alias("example"),
        )
        .collect()
    )
    problems = [r for r in stats if r["unparsable"] or r["bad_status"]]
    if problems:
        lines = [
            f"- {r['_source_file']}: {r['unparsable']} unparsable row(s)"
            f"{' e.g. ' + repr(r['example']) if r['example'] else ''}, "
            f"{r['bad_status']} row(s) with {status} not in {'/'.join(OPS)}"
            for r in sorted(problems, key=lambda r: r["_source_file"])
        ]
        raise FeedError("malformed landed files (fix or remove them):\n" + "\n".join(lines))
    counts = {r["_source_file"]: FileCounts(r["rows"], r["rows"]) for r in stats}
    check_counts(counts, "csv_loads read")
    return counts


@dataclass(frozen=True)
class Load:
    """One demo load of a csv_loads feed: its date, kind and rows (column -> CSV text)."""

    load_date: date
    kind: str
    rows: list[dict[str, str]]


def header_for(feed: Feed, kind: str) -> list[str]:
    """The CSV header of a load of ``kind``: the declared columns, plus the op column for changes."""
    names = [name for name, _ in require_columns(feed)]
    return [*names, op_column(feed)] if kind == "changes" else names


def cell(value: Any) -> str:
    """A CSV cell: empty for NULL, ISO text for dates and times."""
    if value is None:
        return ""
    if hasattr(value, "isoformat"):
        return value.isoformat(sep=" ") if hasattr(value, "hour") else value.isoformat()
    return str(value)


PROVENANCE = {
    "_source_file": "Landed file the row came from, relative to the landing root (the ledger key).",
    "_load_kind": "Kind of the load, from its `_manifest.json`: full or changes.",
    "_load_date": "The load's date, from its `load_date=` folder.",
    "_ingested_at": "When floe ingested the row; one value per ingest batch.",
    "_load_seq": "Load sequence of the ingest batch: increases in commit order across the warehouse (the marts' watermark, docs/reliability.md).",
}


def provenance_docs(feed: Feed) -> dict[str, str]:
    """Descriptions of the columns this kind adds to the raw table."""
    return {
        op_column(feed): f"Change flag of a change load ({'/'.join(OPS)}); NULL in a full extract.",
        **PROVENANCE,
    }
