"""``floe produce``: frame JSON records with a registry version and deliver them.

For tests and demos of a feed a user onboarded (docs/streams.md, "Producing test
records"): each input record (a JSON object a line) is serialized with the feed's
registry schema (the latest version, or ``version``), Glue-framed (docs/registry.md)
and written where the feed reads: a Kafka topic (kind ``kafka``), a Kinesis stream
(``kinesis``) or a new landing file in the stream layout (``stream``). Framing uses
the project's own schemas (the local registry synced from ``schemas/``), the same
UUIDs the decode resolves.
"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from floe.feeds import Feed, FeedError

if TYPE_CHECKING:
    from floe.registry.backends import SchemaVersion
    from floe.runtime import Settings


class ProduceError(FeedError):
    """A record cannot be framed or delivered; the message says which and why."""


@dataclass(frozen=True)
class Produced:
    count: int
    version: int
    target: str


def schema_version(
    feed: Feed, settings: Settings, project_dir: Path, version: int | None
) -> SchemaVersion:
    from floe.feeds.kinds.stream import schemas_dir, spec, sync_local_registry

    s = spec(feed)
    versions = sync_local_registry(settings.state_dir, schemas_dir(project_dir)).versions(
        s.schema, s.registry
    )
    if not versions:
        raise ProduceError(f"feed {feed.id}: schema {s.registry}/{s.schema} has no version")
    if version is None:
        return versions[-1]
    for v in versions:
        if v.version_number == version:
            return v
    raise ProduceError(
        f"feed {feed.id}: schema {s.schema} has no version {version} "
        f"(versions 1..{versions[-1].version_number})"
    )


def frame_records(
    records: Iterable[Any], version: SchemaVersion, *, compress: bool = False
) -> list[bytes]:
    """Glue-framed payloads of ``records``, each checked against the schema first."""
    from floe.registry import codec

    out = []
    for i, record in enumerate(records, start=1):
        try:
            if version.data_format == "JSON":
                codec.validate_json(record, version)
            framed = codec.frame(record, version, compress=compress)
        except (ValueError, TypeError, KeyError) as exc:
            raise ProduceError(
                f"record {i} does not fit {version.name} v{version.version_number}: {exc}"
            ) from exc
        out.append(framed)
    return out


def produce(
    feed: Feed,
    records: Iterable[Any],
    *,
    settings: Settings,
    project_dir: Path,
    version: int | None = None,
    compress: bool = False,
) -> Produced:
    """Frame ``records`` and deliver them where ``feed`` reads."""
    chosen = schema_version(feed, settings, project_dir, version)
    framed = frame_records(records, chosen, compress=compress)
    if feed.kind == "kafka":
        target = _to_kafka(feed, settings, framed)
    elif feed.kind == "kinesis":
        target = _to_kinesis(feed, settings, framed)
    elif feed.kind == "stream":
        target = _to_landing(feed, settings, framed)
    else:
        raise ProduceError(f"feed {feed.id} is kind {feed.kind}: only stream, kafka, kinesis")
    return Produced(len(framed), chosen.version_number, target)


def _to_kafka(feed: Feed, settings: Settings, framed: list[bytes]) -> str:
    from kafka import KafkaProducer

    if not settings.kafka_bootstrap_servers:
        raise ProduceError("set FLOE_KAFKA_BOOTSTRAP_SERVERS to the Kafka brokers")
    topic = str(feed.option("topic"))
    producer = KafkaProducer(
        bootstrap_servers=settings.kafka_bootstrap_servers.split(","), acks="all"
    )
    try:
        for value in framed:
            producer.send(topic, value=value)
        producer.flush(timeout=60)
    finally:
        producer.close()
    return f"kafka topic {topic}"


def _to_kinesis(feed: Feed, settings: Settings, framed: list[bytes]) -> str:
    import boto3

    name = str(feed.option("stream"))
    client = boto3.client(
        "kinesis", endpoint_url=settings.kinesis_endpoint, region_name=settings.aws_region
    )
    for start in range(0, len(framed), 500):
        chunk = framed[start : start + 500]
        entries = [{"Data": v, "PartitionKey": uuid.uuid4().hex} for v in chunk]
        result = client.put_records(StreamName=name, Records=entries)
        if result.get("FailedRecordCount"):
            raise ProduceError(
                f"Kinesis refused {result['FailedRecordCount']} of {len(chunk)} records "
                f"(records {start + 1}..{start + len(chunk)}); re-run with those records"
            )
    return f"kinesis stream {name}"


def _to_landing(feed: Feed, settings: Settings, framed: list[bytes]) -> str:
    from floe.feeds.kinds.stream import stream_path

    now = datetime.now(UTC).replace(tzinfo=None)
    hour = now.replace(minute=0, second=0, microsecond=0)
    path = stream_path(settings.landing, feed, hour).with_name(
        f"{feed.name}-{now:%Y%m%d%H%M%S}-{uuid.uuid4().hex[:8]}.jsonl"
    )
    lines = []
    for i, value in enumerate(framed):
        envelope = {
            "sequenceNumber": f"{now:%Y%m%d%H%M%S%f}{i:08d}",
            "partitionKey": f"key-{i}",
            "approximateArrivalTimestamp": now.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
            "data": base64.b64encode(value).decode(),
        }
        lines.append(json.dumps(envelope, separators=(",", ":")))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")  # hidden until complete (not landed yet)
    tmp.write_text("\n".join(lines) + "\n")
    tmp.replace(path)
    return str(path)
