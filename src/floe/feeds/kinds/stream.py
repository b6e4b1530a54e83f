"""Feed kind ``stream``: Kinesis-style JSONL files of schema-registry-framed records.

Layout (docs/feeds.md): ``<landing>/<feed landing>/ingest_year=YYYY/ingest_month=MM/
ingest_day=DD/ingest_hour=HH/*.jsonl``, one envelope a line:
``{"sequenceNumber", "partitionKey", "approximateArrivalTimestamp", "data"}`` where
``data`` is base64 of a Glue- or Confluent-framed Avro or JSON payload
(docs/registry.md). The feed names its registry schema (``registry_schema``); the raw
table's record columns are the Spark type of the schema's latest version, plus
``timestamps`` typing rules (top-level string fields parsed as timestamps).

One decode pass per batch of new files (floe.decode) feeds three tables: the typed
rows (returned to dbt, which appends them to ``raw.<feed>``), ``raw.quarantine``
(every record that did not decode, with its code) and ``raw.landed_files`` (per-file
counts and checksums). Python workers read the files and write the pass once to a
Parquet staging folder; only per-piece counts reach the driver, and the raw and
quarantine rows are read from the folder. Redeliveries (a sequence number already
ingested for the stream) become ``duplicate`` quarantine rows; the schema registry
is the configured backend (``FLOE_REGISTRY_BACKEND``), opened by each executor.
"""

from __future__ import annotations

import base64
import json
import os
import random
import shutil
import uuid
import zlib
from collections.abc import Sequence
from datetime import datetime, timedelta
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from floe.feeds.declarations import Feed, FeedError
from floe.feeds.files import (
    LandedFile,
    landed_file,
    list_files,
)
from floe.feeds.kinds.base import Batch, IngestContext, demo_maker
from floe.feeds.ledger import FileCounts

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from floe.decode.core import PieceCounts, StreamSpec
    from floe.generator.base import GenerateOptions, WriteReport
    from floe.generator.synth import StreamDemo
    from floe.registry.backends import FileRegistry, RegistryRef, SchemaVersion

OPTIONS = frozenset({"registry_schema", "registry", "timestamps"})
PARTITIONS = ("year", "month", "day", "hour")
FILE_ATTRS = tuple((f"ingest_{p}", "int") for p in PARTITIONS)
FOLDERS = "ingest_year=*/ingest_month=*/ingest_day=*/ingest_hour=*"
RAW_META = (
    "_source_file",
    "_sequence_number",
    "_partition_key",
    "_arrival_ts",
    "_schema_version",
    "ingest_year",
    "ingest_month",
    "ingest_day",
    "ingest_hour",
)


def validate(feed: Feed) -> None:
    if not feed.option("registry_schema"):
        raise FeedError(f"feed {feed.id} (stream): declare meta.floe.registry_schema")
    timestamps = feed.option("timestamps", {})
    if not isinstance(timestamps, dict):
        raise FeedError(f"feed {feed.id}: timestamps must map field names to strptime formats")


def spec(feed: Feed) -> StreamSpec:
    """What the decoder needs to know about the feed."""
    from floe.decode.core import StreamSpec
    from floe.registry.backends import DEFAULT_REGISTRY

    return StreamSpec(
        name=feed.name,
        schema=str(feed.option("registry_schema")),
        registry=str(feed.option("registry", DEFAULT_REGISTRY)),
        timestamps=dict(feed.option("timestamps", {})),
    )


# --------------------------------------------------------------------------- registry


def schemas_dir(project_dir: Path) -> Path:
    return project_dir / "schemas"


def registry_path(state_dir: Path) -> Path:
    return state_dir / "registry"


def sync_local_registry(state_dir: Path, schemas: Path) -> FileRegistry:
    """Register every version under ``schemas/`` in the file registry (idempotent).

    Producers (the generator) and consumers (the decode) both call it, so the UUIDs
    that frame landed records resolve without a manual ``floe registry sync``. UUIDs
    are uuid5 of the definition: the same on every machine.
    """
    from floe.registry.backends import FileRegistry
    from floe.registry.layout import load_sources

    registry = FileRegistry(registry_path(state_dir))
    for source in load_sources(schemas):
        for schema_def in source.schema_defs():
            registry.register_version(schema_def)
    return registry


@lru_cache(maxsize=64)
def _latest_definition(root: str, registry: str, schema: str) -> tuple[str, str]:
    from floe.registry.layout import load_sources

    for source in load_sources(Path(root)):
        if source.name == schema and source.registry == registry:
            return source.data_format, json.dumps(source.definitions[-1])
    raise FeedError(
        f"schema {registry}/{schema} is not under {root} (schemas/<registry>/<schema>/)"
    )


def latest_schema(feed: Feed, project_dir: Path) -> tuple[str, str]:
    """(data format, JSON text) of the latest version of the feed's registry schema."""
    s = spec(feed)
    return _latest_definition(str(schemas_dir(project_dir)), s.registry, s.schema)


def record_type(feed: Feed, project_dir: Path) -> Any:
    """Spark StructType of the stream's records (latest version, timestamps applied)."""
    from pyspark.sql import types as T

    from floe.registry.types import to_spark_type

    data_format, definition = latest_schema(feed, project_dir)
    struct = to_spark_type(definition, data_format)
    if not isinstance(struct, T.StructType):
        raise FeedError(f"feed {feed.id}: the registry schema must be a record / object")
    timestamps = spec(feed).timestamps
    return T.StructType(
        [
            T.StructField(f.name, T.TimestampType() if f.name in timestamps else f.dataType, True)
            for f in struct.fields
        ]
    )


# --------------------------------------------------------------------------- discovery


def discover(feed: Feed, landing: Path) -> list[LandedFile]:
    """Every landed JSONL file of the stream, in folder (hour) and name order."""
    files = []
    for path in list_files(landing / feed.landing, f"{FOLDERS}/*.jsonl", root=landing):
        parts = {}
        for folder in path.parents[:4]:
            name, _, value = folder.name.partition("=")
            parts[name] = value
        try:
            attrs = {f"ingest_{p}": int(parts[f"ingest_{p}"]) for p in PARTITIONS}
        except (KeyError, ValueError) as exc:
            raise FeedError(f"{path}: folders must be ingest_year=YYYY/.../ingest_hour=HH") from exc
        files.append(landed_file(landing, path, **attrs))
    return files


# --------------------------------------------------------------------------- reading


def _staging_dir(state_dir: Path, feed: Feed) -> Path:
    """A fresh folder for one decode pass, named for this process; finished passes removed.

    A pass's rows are read lazily until its caller commits them, so a folder may be
    removed only when its pass is finished: an earlier pass of this process (dbt and
    ``floe stream`` decode a feed's files one pass at a time, committing each before
    the next starts) or a pass of a process that is gone. Another live process's
    folders are left alone, whatever the writer lock says (docs/reliability.md).
    """
    root = state_dir / "decode_staging" / feed.name
    if root.exists():
        for old in root.iterdir():
            if _pass_finished(old.name):
                shutil.rmtree(old, ignore_errors=True)
    return root / f"p{os.getpid()}-{uuid.uuid4().hex}"


def _pass_finished(name: str) -> bool:
    """Whether the staging folder ``name`` (``p<pid>-<uuid>[-duplicates]``) is free."""
    head = name.split("-", 1)[0]
    if not (head.startswith("p") and head[1:].isdigit()):
        return True  # a folder of an older floe: every pass then ran one at a time
    pid = int(head[1:])
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, another user's
        return False
    return False


def split(decoded: DataFrame, feed: Feed, ingested_at: str) -> tuple[DataFrame, DataFrame]:
    """(raw rows, quarantine rows) of a decoded DataFrame, stamped with one batch time."""
    from pyspark.sql import functions as F

    stamp = F.lit(ingested_at).cast("timestamp").alias("_ingested_at")
    good = decoded.where(F.col("error_code").isNull()).select("record.*", *RAW_META, stamp)
    bad = decoded.where(F.col("error_code").isNotNull()).select(
        F.lit(feed.name).alias("feed"),
        "_source_file",
        "_sequence_number",
        "_partition_key",
        "_arrival_ts",
        "raw_data",
        "raw_bytes",
        "error_code",
        "error_detail",
        stamp,
    )
    return good, bad


def registry_ref(ctx: IngestContext) -> RegistryRef:
    """The configured registry backend, as executors open it; checked reachable first.

    The local backend is synced from ``schemas/`` first (producers and the decode
    share its derived UUIDs); Glue is the producers' own registry and is only read.
    """
    from floe.registry.backends import RegistryRef

    ref = RegistryRef.from_settings(ctx.settings)
    if ref.backend == "local":
        sync_local_registry(ctx.state_dir, schemas_dir(ctx.project_dir))
    else:
        ref.open().check_reachable()  # fail the build before any task, naming the endpoint
    return ref


def _file_counts(pieces: Sequence[PieceCounts]) -> dict[str, FileCounts]:
    from floe.feeds.files import combine_checksum

    by_file: dict[str, list[PieceCounts]] = {}
    for piece in pieces:
        by_file.setdefault(piece.source_file, []).append(piece)
    counts = {}
    for key, parts in by_file.items():
        parts.sort(key=lambda p: p.start)
        changed = next((p.changed for p in parts if p.changed), None)
        checksum = None
        if all(p.blocks is not None for p in parts):
            checksum = combine_checksum(bytes.fromhex(p.blocks or "") for p in parts)
        counts[key] = FileCounts(
            sum(p.records_in for p in parts),
            sum(p.decoded for p in parts),
            sum(p.quarantined for p in parts),
            checksum=checksum if changed is None else None,
            skipped=changed,
        )
    return counts


def duplicates(
    spark: SparkSession, feed: Feed, staged: DataFrame, low: str, high: str
) -> DataFrame:
    """``_source_file, _offset, error_detail`` of good staged rows that are redeliveries.

    A record is a redelivery when its sequence number is already in ``raw.<feed>``, or
    an earlier row of this batch (by file, then offset) carries it. The check shuffles
    only a 64-bit hash of each good row's sequence number; rows whose hash is seen twice
    (or in the raw table, read only in the batch's sequence-number range, which Iceberg
    prunes by file statistics) are compared exactly.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    good = staged.where(F.col("error_code").isNull() & F.col("_sequence_number").isNotNull())
    new_hashes = good.select(F.xxhash64("_sequence_number").alias("h"), F.lit(0).alias("old"))
    old_rows = None
    if spark.catalog.tableExists(feed.raw_table):
        old_rows = (
            spark.table(feed.raw_table)
            .where(F.col("_sequence_number").between(low, high))
            .select("_sequence_number")
            .distinct()
        )
        new_hashes = new_hashes.unionByName(
            old_rows.select(F.xxhash64("_sequence_number").alias("h"), F.lit(1).alias("old"))
        )
    suspects = new_hashes.groupBy("h").count().where(F.col("count") > 1).select("h")
    rows = good.join(
        F.broadcast(suspects), F.xxhash64("_sequence_number") == F.col("h"), "left_semi"
    ).select("_sequence_number", "_source_file", "_offset")
    order = Window.partitionBy("_sequence_number").orderBy("_source_file", "_offset")
    ranked = rows.select("*", F.row_number().over(order).alias("n"))
    first = F.first(F.struct("_source_file", "_offset")).over(order)
    ranked = ranked.select("*", first.alias("first"))
    if old_rows is not None:
        ranked = ranked.join(
            old_rows.select("_sequence_number", F.lit(True).alias("in_raw")),
            "_sequence_number",
            "left",
        )
    else:
        ranked = ranked.select("*", F.lit(None).cast("boolean").alias("in_raw"))
    return ranked.where(F.col("in_raw") | (F.col("n") > 1)).select(
        "_source_file",
        "_offset",
        F.when(
            F.col("in_raw"),
            F.concat(
                F.lit("sequence number "),
                F.col("_sequence_number"),
                F.lit(f" is already in {feed.raw_table} (a redelivery)"),
            ),
        )
        .otherwise(
            F.concat(
                F.lit("sequence number "),
                F.col("_sequence_number"),
                F.lit(" was already read from "),
                F.col("first._source_file"),
                F.lit(" at byte "),
                F.col("first._offset").cast("string"),
                F.lit(" (a redelivery)"),
            )
        )
        .alias("dup_detail"),
    )


def _mark_duplicates(
    spark: SparkSession,
    feed: Feed,
    staged: DataFrame,
    staging: Path,
    counts: dict[str, FileCounts],
    low: str | None,
    high: str | None,
) -> DataFrame:
    """``staged`` with redeliveries turned into ``duplicate`` rows; ``counts`` adjusted."""
    from pyspark.sql import functions as F

    from floe.decode.records import DUPLICATE

    if low is None or high is None:
        return staged
    dup_dir = staging.with_name(staging.name + "-duplicates")
    duplicates(spark, feed, staged, low, high).write.parquet(str(dup_dir))
    dups = spark.read.parquet(str(dup_dir))
    per_file = {r[0]: r[1] for r in dups.groupBy("_source_file").count().collect()}
    if not per_file:
        return staged
    for key, n in per_file.items():
        c = counts[key]
        counts[key] = FileCounts(
            c.records_in, c.loaded - n, c.quarantined + n, c.checksum, c.skipped
        )
    marked = staged.join(dups, ["_source_file", "_offset"], "left")
    is_dup = F.col("dup_detail").isNotNull()
    return marked.select(
        *(
            F.when(is_dup, F.lit(DUPLICATE)).otherwise(F.col(c)).alias(c)
            if c == "error_code"
            else F.when(is_dup, F.col("dup_detail")).otherwise(F.col(c)).alias(c)
            if c == "error_detail"
            else F.when(is_dup, F.to_json("record")).otherwise(F.col(c)).alias(c)
            if c == "raw_data"
            else F.col(c)
            for c in staged.columns
        )
    )


def _finish(
    spark: SparkSession,
    feed: Feed,
    ctx: IngestContext,
    staging: Path,
    pieces: Sequence[PieceCounts],
) -> Batch:
    """Counts, redeliveries, raw and quarantine rows of a staged decode pass."""
    from pyspark.sql import functions as F

    from floe.decode.core import read_staged

    counts = _file_counts(pieces)
    staged = read_staged(spark, staging, record_type(feed, ctx.project_dir))
    changed = sorted(k for k, c in counts.items() if c.skipped)
    if changed:
        # Read while it was being written: its rows go nowhere, the ledger does not
        # record it, the next build reads it whole.
        staged = staged.where(~F.col("_source_file").isin(changed))
    live = [p for p in pieces if p.source_file not in changed]
    lows = [p.min_seq for p in live if p.min_seq is not None]
    highs = [p.max_seq for p in live if p.max_seq is not None]
    staged = _mark_duplicates(
        spark,
        feed,
        staged,
        staging,
        counts,
        min(lows) if lows else None,
        max(highs) if highs else None,
    )
    good, bad = split(staged, feed, ctx.ingested_at)
    return Batch(rows=good, counts=counts, quarantine=bad, notes={"skipped": changed})


def decode(spark: SparkSession, feed: Feed, lines: DataFrame, ctx: IngestContext) -> Batch:
    """Decode ``lines`` (``_line, _source_file, ingest_*``; a streaming micro-batch)."""
    from floe.decode.core import DecodeLimits, stage_lines

    ref = registry_ref(ctx)
    staging = _staging_dir(ctx.state_dir, feed)
    pieces = stage_lines(
        lines,
        spec(feed),
        record_type(feed, ctx.project_dir),
        ref,
        DecodeLimits.from_settings(ctx.settings),
        staging,
    )
    return _finish(spark, feed, ctx, staging, pieces)


def read(spark: SparkSession, feed: Feed, files: Sequence[LandedFile], ctx: IngestContext) -> Batch:
    """Decode ``files`` in one staged pass: Python workers read, decode and stage them."""
    from floe.decode.core import DecodeLimits, stage_files

    ref = registry_ref(ctx)
    staging = _staging_dir(ctx.state_dir, feed)
    pieces = stage_files(
        spark,
        files,
        spec(feed),
        record_type(feed, ctx.project_dir),
        ref,
        DecodeLimits.from_settings(ctx.settings),
        staging,
        ctx.settings.decode_split_bytes,
    )
    return _finish(spark, feed, ctx, staging, pieces)


def empty(spark: SparkSession, feed: Feed, ctx: IngestContext) -> DataFrame:
    """The raw table's shape with no rows (what dbt gets when nothing is new)."""
    from pyspark.sql import functions as F

    from floe.decode.core import decode_output_schema

    decoded = spark.createDataFrame([], decode_output_schema(record_type(feed, ctx.project_dir)))
    decoded = decoded.select("*", F.lit(None).cast("timestamp").alias("_arrival_ts"))
    return split(decoded, feed, ctx.ingested_at)[0]


# --------------------------------------------------------------------------- demo data

HOURS = (0, 6, 12, 18)  # ingest hours with a file per stream per demo day
COMPRESSED_SHARE = 0.05
WIRE_CLASSES = ("bad_base64", "bad_header", "bad_zlib", "unknown_schema")
AVRO_CLASSES = ("avro_decode",)
JSON_CLASSES = ("json_parse", "schema_violation", "cast_failure")


def records_per_file(scale: int) -> int:
    """~scale/4 records per stream per day (hundreds at scale 1000), spread over HOURS."""
    return max(3, scale // (4 * len(HOURS)))


def bad_classes(data_format: str, demo: StreamDemo) -> tuple[str, ...]:
    """Failure classes a stream's demo data exhibits (Avro vs JSON payload classes differ)."""
    if data_format == "AVRO":
        return WIRE_CLASSES + AVRO_CLASSES
    payload = ["json_parse"]
    if demo.violation_field:
        payload.append("schema_violation")
    if demo.cast_failure:
        payload.append("cast_failure")
    return WIRE_CLASSES + tuple(payload)


def stream_path(landing: Path, feed: Feed, hour_start: datetime, part: int = 0) -> Path:
    h = hour_start
    return (
        landing
        / feed.landing
        / f"ingest_year={h.year:04d}"
        / f"ingest_month={h.month:02d}"
        / f"ingest_day={h.day:02d}"
        / f"ingest_hour={h.hour:02d}"
        / f"{feed.name}-{h:%Y%m%d%H}-{part:04d}.jsonl"
    )


def _broken(
    kind: str, demo: StreamDemo, record: dict, version: SchemaVersion, rng: random.Random
) -> str:
    """The landed ``data`` text of a record broken in the ``kind`` way."""
    from floe.registry import codec, wire

    good = codec.frame(record, version)
    if kind == "bad_base64":
        return base64.b64encode(good).decode()[:-3] + "!@#"
    if kind == "bad_header":
        return base64.b64encode(b"\x07" + good[1:]).decode()
    if kind == "bad_zlib":
        body = zlib.compress(codec.encode_payload(record, version))
        framed = bytes((wire.GLUE_HEADER_VERSION, wire.COMPRESSION_ZLIB)) + version.uuid.bytes
        return base64.b64encode(framed + body[: len(body) // 2]).decode()
    if kind == "unknown_schema":
        unknown = uuid.UUID(int=rng.getrandbits(128), version=4)
        return base64.b64encode(good[:2] + unknown.bytes + good[18:]).decode()
    if kind == "avro_decode":
        return base64.b64encode(good[: 18 + max(1, (len(good) - 18) // 3)]).decode()
    if kind == "json_parse":
        payload = codec.encode_payload(record, version)[:-5] + b"{,"
        return base64.b64encode(wire.encode_glue(payload, version.uuid)).decode()
    if kind == "schema_violation" and demo.violation_field:
        payload = json.dumps({**record, demo.violation_field: "not-a-number"}).encode()
        return base64.b64encode(wire.encode_glue(payload, version.uuid)).decode()
    if kind == "cast_failure" and demo.cast_failure:
        # Valid under the JSON Schema, but the raw table's Spark type cannot hold it.
        field_name, value = demo.cast_failure
        return base64.b64encode(codec.frame({**record, field_name: value}, version)).decode()
    raise ValueError(f"unknown failure class {kind!r}")


def write_stream(feed: Feed, demo: StreamDemo, opts: GenerateOptions, report: WriteReport) -> None:
    """Envelopes a file per demo hour; multi-version schemas switch half-way through the days.

    A share ``bad_share`` of records is deliberately broken, cycling through every
    failure class that applies (:func:`bad_classes`); when ``bad_share > 0`` the first
    file carries one record of each class, so small runs cover them all. About 5 % of
    good records are zlib-compressed.
    """
    from floe.generator.base import write_landed
    from floe.registry import codec
    from floe.runtime import Settings

    s = spec(feed)
    registry = sync_local_registry(
        Settings.from_env().state_dir, schemas_dir(Settings.from_env().dbt_project_dir())
    )
    versions = registry.versions(s.schema, s.registry)
    if not versions:
        raise FeedError(f"feed {feed.id}: schema {s.registry}/{s.schema} has no version")
    rng = opts.rng(f"streams/{feed.name}")
    make = demo.make()
    classes = bad_classes(versions[-1].data_format, demo)
    per_file = records_per_file(opts.scale)
    sequence = 49_000_000_000_000_000_000_000_000 + rng.randint(0, 10**6) * 10**12
    i = 0
    forced = list(classes) if opts.bad_share > 0 else []
    bad_cycle = 0
    for day_index, day in enumerate(opts.load_dates()):
        version = versions[0] if day_index < max(1, opts.days // 2) else versions[-1]
        for hour in HOURS:
            hour_start = datetime(day.year, day.month, day.day, hour)
            lines = []
            for n in range(per_file):
                i += 1
                sequence += rng.randint(1, 10**6)
                ts = hour_start + timedelta(seconds=int(n * 3600 / per_file) + rng.randint(0, 2))
                record = make(rng, i, ts, version.version_number)
                if forced:
                    kind = forced.pop(0)
                elif rng.random() < opts.bad_share:
                    kind, bad_cycle = classes[bad_cycle % len(classes)], bad_cycle + 1
                else:
                    kind = None
                if kind is None:
                    framed = codec.frame(record, version, compress=rng.random() < COMPRESSED_SHARE)
                    data = base64.b64encode(framed).decode()
                else:
                    data = _broken(kind, demo, record, version, rng)
                envelope = {
                    "sequenceNumber": str(sequence),
                    "partitionKey": f"key-{i % 16}",
                    "approximateArrivalTimestamp": ts.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
                    "data": data,
                }
                lines.append(json.dumps(envelope, separators=(",", ":")))
            body = ("\n".join(lines) + "\n").encode()
            write_landed(stream_path(opts.landing, feed, hour_start), body, report)


def generate(feed: Feed, opts: GenerateOptions, report: WriteReport) -> None:
    """The stream's demo files (content: ``meta.floe.demo`` or drawn from its schema)."""
    from floe.generator.synth import stream_demo

    write_stream(feed, demo_maker(feed, stream_demo)(feed, opts), opts, report)


PROVENANCE = {
    "_source_file": "Landed file the record came from, relative to the landing root (the ledger key).",
    "_sequence_number": "Kinesis sequence number of the record.",
    "_partition_key": "Kinesis partition key of the record.",
    "_arrival_ts": "approximateArrivalTimestamp of the record.",
    "_schema_version": "Registry version number the record was framed with.",
    "ingest_year": "Year of the landing folder (ingest_year=).",
    "ingest_month": "Month of the landing folder (ingest_month=).",
    "ingest_day": "Day of the landing folder (ingest_day=).",
    "ingest_hour": "Hour of the landing folder (ingest_hour=).",
    "_ingested_at": "When floe ingested the record; one value per ingest batch.",
    "_load_seq": "Load sequence of the ingest batch: increases in commit order across the warehouse (the marts' watermark, docs/reliability.md).",
}


def provenance_docs(feed: Feed) -> dict[str, str]:
    """Descriptions of the envelope and folder columns this kind adds to the raw table."""
    return dict(PROVENANCE)


def field_docs(feed: Feed, project_dir: Path) -> dict[str, str]:
    """Descriptions of the record's top-level fields from the registry schema (latest
    version): Avro ``doc``, JSON Schema ``description``."""
    data_format, text = latest_schema(feed, project_dir)
    if data_format == "PROTOBUF":
        return {}  # .proto comments are not carried by descriptors
    schema = json.loads(text)
    if data_format == "AVRO":
        return {f["name"]: str(f["doc"]) for f in schema.get("fields", []) if f.get("doc")}
    return {
        name: str(prop["description"])
        for name, prop in (schema.get("properties") or {}).items()
        if isinstance(prop, dict) and prop.get("description")
    }
