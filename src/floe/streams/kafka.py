"""Bounded fetches from a Kafka topic (kafka-python; any Kafka-protocol broker).

No consumer group is used: floe assigns every partition itself, seeks to the
position its ledger holds and never commits offsets to the broker (docs/streams.md).
A batch is bounded by a record and byte cap and by the broker running dry — never by
the broker's reported end offset alone: a ListOffsets ``latest`` answer may be below
the true end (it is on the Tansu broker the tests run), so floe fetches until an
empty poll or the cap.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from floe.streams.records import Fetched, Gap, Record, StreamSourceError

if TYPE_CHECKING:
    from kafka import KafkaConsumer

EMPTY_POLL_MS = 300  # a poll that waits this long with nothing new ends a fetch
EMPTY_POLLS = 2  # consecutive empty polls that end a fetch


@dataclass
class KafkaSource:
    """One topic on one cluster; ``bootstrap`` is ``host:port[,host:port]``."""

    bootstrap: str
    topic: str
    client_id: str = "floe"
    _consumer: Any = field(default=None, repr=False)

    def consumer(self) -> KafkaConsumer:
        if self._consumer is None:
            from kafka import KafkaConsumer
            from kafka.errors import KafkaError

            try:
                self._consumer = KafkaConsumer(
                    bootstrap_servers=self.bootstrap.split(","),
                    client_id=self.client_id,
                    group_id=None,
                    enable_auto_commit=False,
                    auto_offset_reset="earliest",
                    request_timeout_ms=30_000,
                )
            except KafkaError as exc:
                raise StreamSourceError(
                    f"Kafka brokers {self.bootstrap} cannot be reached ({exc}); check "
                    "FLOE_KAFKA_BOOTSTRAP_SERVERS"
                ) from exc
        return self._consumer

    def close(self) -> None:
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None

    def partitions(self) -> list[int]:
        """The topic's partitions, from fresh metadata (new partitions are followed)."""
        consumer = self.consumer()
        consumer._client.cluster.request_update()  # stale now: the next lookup refreshes
        found = consumer.partitions_for_topic(self.topic)
        if not found:
            raise StreamSourceError(
                f"Kafka topic {self.topic!r} does not exist on {self.bootstrap} "
                "(create it, or fix meta.floe.topic)"
            )
        return sorted(found)

    def fetch(
        self,
        positions: dict[str, int],
        starting_position: str | datetime,
        *,
        max_records: int,
        max_bytes: int,
    ) -> Fetched:
        """Records from ``positions`` (partition -> next offset) on, at most the caps.

        A partition without a position starts at its earliest offset, or — for
        ``latest`` or a timestamp — gets only a ``start`` marker this batch (the
        position then holds from the next batch on, even if nothing was produced).
        Once the feed holds positions, a partition without one was added to the topic
        since: it is read from its earliest offset whatever the starting position (as
        Spark's Kafka source does), so nothing produced to it before floe saw it is lost.
        """
        from kafka import TopicPartition

        consumer = self.consumer()
        tps = {str(p): TopicPartition(self.topic, p) for p in self.partitions()}
        beginning = {
            str(tp.partition): o for tp, o in consumer.beginning_offsets(list(tps.values())).items()
        }
        gaps: list[Gap] = []
        starts: dict[str, str] = {}
        seek: dict[str, int] = {}
        for part in tps:
            if part in positions:
                nxt = positions[part]
                if nxt < beginning[part]:
                    gaps.append(
                        Gap(part, str(nxt), str(beginning[part] - 1), beginning[part] - nxt)
                    )
                    nxt = beginning[part]
                seek[part] = nxt
            elif starting_position == "earliest" or positions:
                seek[part] = beginning[part]
            else:
                starts[part] = str(self._start_offset(tps[part], starting_position))
        records: dict[str, list[Record]] = {p: [] for p in seek}
        if seek:
            self._poll(consumer, {p: tps[p] for p in seek}, seek, records, max_records, max_bytes)
        return Fetched({p: r for p, r in records.items() if r}, gaps, starts)

    def _start_offset(self, tp: Any, starting_position: str | datetime) -> int:
        consumer = self.consumer()
        if isinstance(starting_position, datetime):
            found = consumer.offsets_for_times({tp: int(starting_position.timestamp() * 1000)})
            hit = found.get(tp)
            if hit is not None:
                return int(hit.offset)
        # latest (or a time after the last record): the true end, found by fetching
        # from the reported end until the broker runs dry.
        end = int(consumer.end_offsets([tp])[tp])
        probe: dict[str, list[Record]] = {str(tp.partition): []}
        self._poll(consumer, {str(tp.partition): tp}, {str(tp.partition): end}, probe, 10**9, 2**62)
        seen = probe[str(tp.partition)]
        return int(seen[-1].position) + 1 if seen else end

    def _poll(
        self,
        consumer: Any,
        tps: dict[str, Any],
        seek: dict[str, int],
        out: dict[str, list[Record]],
        max_records: int,
        max_bytes: int,
    ) -> None:
        consumer.assign(list(tps.values()))
        for part, tp in tps.items():
            consumer.seek(tp, seek[part])
        total = size = 0
        empty = 0
        full = False
        while not full and empty < EMPTY_POLLS:
            polled = consumer.poll(timeout_ms=EMPTY_POLL_MS, max_records=10_000)
            if not polled:
                empty += 1
                continue
            empty = 0
            for tp, batch in polled.items():
                part = str(tp.partition)
                kept = out[part]
                expected = int(kept[-1].position) + 1 if kept else seek[part]
                for message in batch:
                    if message.offset < expected:
                        continue  # a re-sent batch overlapping what was kept
                    if full or total >= max_records or size >= max_bytes:
                        full = True
                        break
                    value = message.value or b""
                    kept.append(
                        Record(
                            part,
                            str(message.offset),
                            message.key.decode("utf-8", "replace") if message.key else None,
                            message.timestamp,
                            value,
                        )
                    )
                    expected = message.offset + 1
                    total += 1
                    size += len(value)
        consumer.unsubscribe()
