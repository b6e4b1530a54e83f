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
from the tables, never from a consumer group. What it shares with ``kinesis`` is
:class:`floe.feeds.kinds.broker.BrokerFeedKind`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from floe.feeds.declarations import Feed, FeedError
from floe.feeds.kinds.broker import BrokerFeedKind, BrokerSource, partition_column

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from floe.runtime import Settings
    from floe.streams import Record


class KafkaKind(BrokerFeedKind):
    KIND = "kafka"
    ADDRESS = "topic"
    ADDRESS_TEXT = "a Kafka topic name"
    ADDRESS_MAX = 249
    SOURCE_TEXT = "brokers"
    START_WORD = "start"
    PROVENANCE = {
        "_source_file": "Segment the record was read in: kafka://<topic>/<partition>/<first>-<next> (the ledger key).",
        "_sequence_number": "<partition>:<offset>, zero-padded: unique in the topic.",
        "_partition_key": "Kafka record key (UTF-8).",
        "_arrival_ts": "Broker timestamp of the record (CreateTime or LogAppendTime).",
        "_topic": "Kafka topic.",
        "_topic_partition": "Kafka partition (Iceberg reserves _partition).",
        "_offset": "Kafka offset of the record in its partition.",
    }

    def positions(self, keys: Iterable[str]) -> dict[str, int]:
        """Partition -> next offset to read, from the done segments' keys."""
        from floe.streams import parse_segment_key

        out: dict[str, int] = {}
        for key in keys:
            parsed = parse_segment_key(key)
            if parsed is not None:
                out[parsed.partition] = max(out.get(parsed.partition, 0), int(parsed.last))
        return out

    def sequence(self, record: Record) -> str:
        """Unique within the topic and ordered within a partition: ``ppppp:oooo…`` (20 digits)."""
        return f"{int(record.partition):05d}:{int(record.position):020d}"

    def last(self, records: Sequence[Record]) -> str:
        """The next offset after the segment."""
        return str(int(records[-1].position) + 1)

    def coordinates(self, rows: DataFrame, name: str) -> DataFrame:
        from pyspark.sql import functions as F

        return rows.select(
            "*",
            F.lit(name).alias("_topic"),
            partition_column().cast("int").alias("_topic_partition"),
            F.split(F.col("_sequence_number"), ":").getItem(1).cast("bigint").alias("_offset"),
        )

    def endpoint(self, feed: Feed, settings: Settings) -> str:
        if not settings.kafka_bootstrap_servers:
            raise FeedError(
                f"feed {feed.id} (kafka): set FLOE_KAFKA_BOOTSTRAP_SERVERS to the brokers "
                "(host:port[,host:port]); brokers are configuration, not YAML"
            )
        return settings.kafka_bootstrap_servers

    def open(self, endpoint: Any, name: str) -> BrokerSource:
        from floe.streams.kafka import KafkaSource

        return KafkaSource(str(endpoint), name)


KAFKA = KafkaKind()
