"""Feed kind ``kafka``: a Kafka topic of schema-registry-framed records, read directly.

Declared like every feed (docs/streams.md)::

    - name: rides
      config:
        meta:
          floe: {kind: kafka, topic: unicorn-rides, registry_schema: rides,
                 starting_position: earliest}

The brokers come from the environment (``FLOE_KAFKA_BOOTSTRAP_SERVERS``), never from
YAML. Records are decoded by the stream kind's registry path (Glue or Confluent
framing; Avro, JSON or Protobuf payloads) and land in ``raw.<feed>`` with
``_topic, _topic_partition, _offset`` and the broker timestamp (``_arrival_ts``). Positions
are the ledger's done segments (:mod:`floe.feeds.consume`): exactly once, resumed
from the tables, never from a consumer group.
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

OPTIONS = stream.OPTIONS | frozenset({"topic", "starting_position", "max_records", "max_bytes"})
CONSUMES = True  # read from a broker by consume(), not from landed files


def validate(feed: Feed) -> None:
    from floe.feeds.consume import batch_caps, starting_position

    stream.validate(feed)
    topic = feed.option("topic")
    if not isinstance(topic, str) or not topic or "/" in topic or len(topic) > 249:
        raise FeedError(f"feed {feed.id} (kafka): declare meta.floe.topic (a Kafka topic name)")
    check_identifier(feed.name, f"feed {feed.id}: name")
    starting_position(feed)
    batch_caps(feed)


def positions(keys: Iterable[str]) -> dict[str, int]:
    """Partition -> next offset to read, from the done segments' keys."""
    from floe.streams import parse_segment_key

    out: dict[str, int] = {}
    for key in keys:
        parsed = parse_segment_key(key)
        if parsed is not None:
            out[parsed.partition] = max(out.get(parsed.partition, 0), int(parsed.last))
    return out


def sequence(record: Record) -> str:
    """Unique within the topic and ordered within a partition: ``ppppp:oooo…`` (20 digits)."""
    return f"{int(record.partition):05d}:{int(record.position):020d}"


def bus(feed: Feed, settings: Settings) -> Bus:
    from floe.feeds.consume import Bus

    if not settings.kafka_bootstrap_servers:
        raise FeedError(
            f"feed {feed.id} (kafka): set FLOE_KAFKA_BOOTSTRAP_SERVERS to the brokers "
            "(host:port[,host:port]); brokers are configuration, not YAML"
        )
    source = _source(settings.kafka_bootstrap_servers, str(feed.option("topic")))

    def fetch(pos: dict[str, Any], start: str | datetime, records: int, size: int) -> Any:
        return source.fetch(pos, start, max_records=records, max_bytes=size)

    return Bus("kafka", source.topic, positions, fetch, sequence, "start")


_SOURCES: dict[tuple[str, str], Any] = {}


def _source(bootstrap: str, topic: str) -> Any:
    """One client per (brokers, topic) per process: a continuous job reuses it."""
    from floe.streams.kafka import KafkaSource

    key = (bootstrap, topic)
    if key not in _SOURCES:
        _SOURCES[key] = KafkaSource(bootstrap, topic)
    return _SOURCES[key]


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
    """One exactly-once micro-batch of the topic (:func:`floe.feeds.consume.consume`)."""
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
    raise FeedError(f"feed {feed.id} (kafka) is read from its brokers by consume(), not files")


def empty(spark: SparkSession, feed: Feed, ctx: IngestContext) -> DataFrame:
    return stream.empty(spark, feed, ctx)


PROVENANCE = {
    **{k: v for k, v in stream.PROVENANCE.items() if not k.startswith("ingest_")},
    "_source_file": "Segment the record was read in: kafka://<topic>/<partition>/<first>-<next> (the ledger key).",
    "_sequence_number": "<partition>:<offset>, zero-padded: unique in the topic.",
    "_partition_key": "Kafka record key (UTF-8).",
    "_arrival_ts": "Broker timestamp of the record (CreateTime or LogAppendTime).",
    "ingest_year": "Year floe read the record.",
    "ingest_month": "Month floe read the record.",
    "ingest_day": "Day floe read the record.",
    "ingest_hour": "Hour floe read the record.",
    "_topic": "Kafka topic.",
    "_topic_partition": "Kafka partition (Iceberg reserves _partition).",
    "_offset": "Kafka offset of the record in its partition.",
}


def provenance_docs(feed: Feed) -> dict[str, str]:
    return dict(PROVENANCE)


def field_docs(feed: Feed, project_dir: Path) -> dict[str, str]:
    return stream.field_docs(feed, project_dir)
