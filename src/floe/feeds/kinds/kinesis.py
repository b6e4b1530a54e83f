"""Feed kind ``kinesis``: a Kinesis data stream of schema-registry-framed records.

Declared like every feed (docs/streams.md)::

    - name: ventilator
      config:
        meta:
          floe: {kind: kinesis, stream: ventilator-stream, registry_schema: ventilator}

The endpoint and credentials come from the environment (``FLOE_KINESIS_ENDPOINT`` or
``AWS_ENDPOINT_URL``, the AWS credential chain, ``AWS_REGION``), never from YAML.
Records land in ``raw.<feed>`` with ``_stream, _shard``, the sequence number and the
approximate arrival time. Positions are the last sequence number of the ledger's done
segments per shard (:mod:`floe.feeds.consume`); split and merged shards are followed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from floe.feeds.declarations import Feed, FeedError, check_identifier
from floe.feeds.kinds import stream
from floe.feeds.kinds.base import Batch, IngestContext

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from floe.feeds.consume import Bus
    from floe.feeds.files import LandedFile
    from floe.feeds.kinds.base import IngestResult
    from floe.runtime import Settings
    from floe.streams import Record

OPTIONS = stream.OPTIONS | frozenset({"stream", "starting_position", "max_records", "max_bytes"})
CONSUMES = True  # read from a broker by consume(), not from landed files


def validate(feed: Feed) -> None:
    from floe.feeds.consume import batch_caps, starting_position

    stream.validate(feed)
    name = feed.option("stream")
    if not isinstance(name, str) or not name or "/" in name or len(name) > 128:
        raise FeedError(f"feed {feed.id} (kinesis): declare meta.floe.stream (a stream name)")
    check_identifier(feed.name, f"feed {feed.id}: name")
    starting_position(feed)
    batch_caps(feed)


def positions(keys: Iterable[str]) -> dict[str, Any]:
    """Shard -> where to resume (after its last sequence number, or at a start time)."""
    from floe.streams import parse_segment_key
    from floe.streams.kinesis import ShardPosition

    after: dict[str, int] = {}
    at: dict[str, int] = {}
    for key in keys:
        parsed = parse_segment_key(key)
        if parsed is None:
            continue
        if parsed.first == "at":
            at[parsed.partition] = int(parsed.last)
        else:
            after[parsed.partition] = max(after.get(parsed.partition, 0), int(parsed.last))
    out: dict[str, Any] = {s: ShardPosition(at_ms=ms) for s, ms in at.items()}
    out.update({s: ShardPosition(after=str(seq)) for s, seq in after.items()})
    return out


def sequence(record: Record) -> str:
    """``<shard id>:<sequence number, 60 digits>``: unique in the stream and ordered in a
    shard (AWS numbers are unique per stream, a local endpoint's per shard only)."""
    return f"{record.partition}:{int(record.position):060d}"


def bus(feed: Feed, settings: Settings) -> Bus:
    from floe.feeds.consume import Bus
    from floe.streams.kinesis import KinesisSource

    source = KinesisSource(
        str(feed.option("stream")), settings.kinesis_endpoint, settings.aws_region
    )

    def fetch(pos: dict[str, Any], start: str | datetime, records: int, size: int) -> Any:
        return source.fetch(pos, start, max_records=records, max_bytes=size)

    return Bus("kinesis", source.stream, positions, fetch, sequence, "at")


def consume(
    spark: SparkSession,
    feed: Feed,
    *,
    raw_exists: bool,
    settings: Settings,
    project_dir: Path,
    max_records: int | None = None,
    max_bytes: int | None = None,
) -> IngestResult:
    """One exactly-once micro-batch of the stream (:func:`floe.feeds.consume.consume`)."""
    from floe.feeds.consume import consume as run

    return run(
        spark,
        feed,
        bus(feed, settings),
        raw_exists=raw_exists,
        settings=settings,
        project_dir=project_dir,
        max_records=max_records,
        max_bytes=max_bytes,
    )


def discover(feed: Feed, landing: Path) -> list[LandedFile]:
    """Nothing lands on disk for a broker kind."""
    return []


def read(spark: SparkSession, feed: Feed, files: Sequence[LandedFile], ctx: IngestContext) -> Batch:
    raise FeedError(f"feed {feed.id} (kinesis) is read from its stream by consume(), not files")


def empty(spark: SparkSession, feed: Feed, ctx: IngestContext) -> DataFrame:
    return stream.empty(spark, feed, ctx)


PROVENANCE = {
    **{k: v for k, v in stream.PROVENANCE.items() if not k.startswith("ingest_")},
    "_source_file": "Segment the record was read in: kinesis://<stream>/<shard>/<first>-<last> (the ledger key).",
    "_sequence_number": "<shard id>:<sequence number, 60 digits>: unique in the stream.",
    "ingest_year": "Year floe read the record.",
    "ingest_month": "Month floe read the record.",
    "ingest_day": "Day floe read the record.",
    "ingest_hour": "Hour floe read the record.",
    "_stream": "Kinesis stream.",
    "_shard": "Kinesis shard id.",
}


def provenance_docs(feed: Feed) -> dict[str, str]:
    return dict(PROVENANCE)


def field_docs(feed: Feed, project_dir: Path) -> dict[str, str]:
    return stream.field_docs(feed, project_dir)
