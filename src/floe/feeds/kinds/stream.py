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
ingested for the stream) become ``duplicate`` quarantine rows
(:mod:`floe.feeds.kinds.stream_dedup`); the schema registry is the configured backend
(``FLOE_REGISTRY_BACKEND``), opened by each executor, the local one synced from
``schemas/`` first (:mod:`floe.registry.sync`). Demo files: :mod:`floe.generator.writers`.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import uuid
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from floe.decode.core import (
    DecodeLimits,
    PieceCounts,
    StreamSpec,
    decode_output_schema,
    jvm_available,
    jvm_versions,
    read_staged,
    stage_files,
    stage_lines,
)
from floe.feeds.declarations import Feed, FeedError
from floe.feeds.files import (
    LandedFile,
    combine_checksum,
    decode_source,
    landed_file,
    list_files,
)
from floe.feeds.kinds.base import Batch, IngestContext
from floe.feeds.kinds.stream_dedup import mark_duplicates
from floe.feeds.ledger import FileCounts
from floe.registry.backends import DEFAULT_REGISTRY, RegistryRef, UnknownSchemaError
from floe.registry.sync import latest_definition, schemas_dir, sync_local_registry
from floe.runtime.jars import batch_timestamp

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

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
    return StreamSpec(
        name=feed.name,
        schema=str(feed.option("registry_schema")),
        registry=str(feed.option("registry", DEFAULT_REGISTRY)),
        timestamps=dict(feed.option("timestamps", {})),
    )


# --------------------------------------------------------------------------- schema


def latest_schema(feed: Feed, project_dir: Path) -> tuple[str, str]:
    """(data format, JSON text) of the latest version of the feed's registry schema."""
    s = spec(feed)
    try:
        return latest_definition(str(schemas_dir(project_dir)), s.registry, s.schema)
    except UnknownSchemaError as exc:
        raise FeedError(f"feed {feed.id}: {exc}") from exc


def record_type(feed: Feed, project_dir: Path) -> Any:
    """Spark StructType of the stream's records (latest version, timestamps applied)."""
    # Function-local: floe.registry.types imports pyspark, which `floe generate` and the
    # feed declarations never need.
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

    stamp = batch_timestamp(decoded.sparkSession, ingested_at).alias("_ingested_at")
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
    ref = RegistryRef.from_settings(ctx.settings)
    if ref.backend == "local":
        sync_local_registry(ctx.state_dir, schemas_dir(ctx.project_dir))
    else:
        ref.open().check_reachable()  # fail the build before any task, naming the endpoint
    return ref


def _file_counts(pieces: Sequence[PieceCounts]) -> dict[str, FileCounts]:
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


def _finish(
    spark: SparkSession,
    feed: Feed,
    ctx: IngestContext,
    staging: Path,
    pieces: Sequence[PieceCounts],
    *,
    redeliveries: bool = True,
) -> Batch:
    """Counts, redeliveries (unless the source rules them out), raw and quarantine rows
    of a staged decode pass."""
    from pyspark.sql import functions as F

    counts = _file_counts(pieces)
    staged = read_staged(spark, staging, record_type(feed, ctx.project_dir))
    changed = sorted(k for k, c in counts.items() if c.skipped)
    if changed:
        # Read while it was being written: its rows go nowhere, the ledger does not
        # record it, the next build reads it whole.
        staged = staged.where(~F.col("_source_file").isin(changed))
    live = [p for p in pieces if p.source_file not in changed]
    lows = [p.min_seq for p in live if p.min_seq is not None and redeliveries]
    highs = [p.max_seq for p in live if p.max_seq is not None and redeliveries]
    staged = mark_duplicates(
        spark,
        feed,
        staged,
        staging,
        counts,
        min(lows) if lows else None,
        max(highs) if highs else None,
        unique=_unique_sequences(live),
    )
    good, bad = split(staged, feed, ctx.ingested_at)
    return Batch(rows=good, counts=counts, quarantine=bad, notes={"skipped": changed})


def _unique_sequences(pieces: Sequence[PieceCounts]) -> bool:
    """Whether no two good rows of ``pieces`` can share a sequence number: each piece
    says its own are unique, and the pieces' ranges do not overlap."""
    if not all(p.unique_seq for p in pieces):
        return False
    ranges = sorted(
        (p.min_seq, p.max_seq) for p in pieces if p.min_seq is not None and p.max_seq is not None
    )
    return all(prev[1] < nxt[0] for prev, nxt in itertools.pairwise(ranges))


def decode(
    spark: SparkSession,
    feed: Feed,
    lines: DataFrame,
    ctx: IngestContext,
    *,
    redeliveries: bool = True,
) -> Batch:
    """Decode ``lines`` (``_line, _source_file, ingest_*``; a streaming micro-batch).

    ``redeliveries=False``: the source cannot hand a record over twice (a broker kind's
    segments cover each position once, docs/streams.md), so the redelivery check — a
    join against ``raw.<feed>`` — is skipped."""
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
    return _finish(spark, feed, ctx, staging, pieces, redeliveries=redeliveries)


def read(spark: SparkSession, feed: Feed, files: Sequence[LandedFile], ctx: IngestContext) -> Batch:
    """Decode ``files`` in one staged pass: Python workers read, decode and stage them."""
    ref = registry_ref(ctx)
    staging = _staging_dir(ctx.state_dir, feed)
    pieces = stage_files(
        spark,
        [decode_source(f) for f in files],
        spec(feed),
        record_type(feed, ctx.project_dir),
        ref,
        DecodeLimits.from_settings(ctx.settings),
        staging,
        ctx.settings.decode_split_bytes,
        jvm=jvm_decode(spark, feed, ref, ctx.settings.decode_engine),
    )
    return _finish(spark, feed, ctx, staging, pieces)


def jvm_decode(spark: SparkSession, feed: Feed, ref: RegistryRef, engine: str) -> str | None:
    """The versions the JVM decoder takes for ``feed`` (``Settings.decode_engine``), or None."""
    if engine == "python":
        return None
    if not jvm_available(spark):
        if engine == "jvm":
            raise FeedError(
                "FLOE_DECODE_ENGINE=jvm but the session has no floe decoder jar: "
                "run `floe dev build-jvm` (make setup does), or unset FLOE_DECODE_ENGINE"
            )
        return None
    s = spec(feed)
    return jvm_versions(s, ref.open().versions(s.schema, s.registry))


def empty(spark: SparkSession, feed: Feed, ctx: IngestContext) -> DataFrame:
    """The raw table's shape with no rows (what dbt gets when nothing is new)."""
    from pyspark.sql import functions as F

    decoded = spark.createDataFrame([], decode_output_schema(record_type(feed, ctx.project_dir)))
    decoded = decoded.select("*", F.lit(None).cast("timestamp").alias("_arrival_ts"))
    return split(decoded, feed, ctx.ingested_at)[0]


# --------------------------------------------------------------------------- layout


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
