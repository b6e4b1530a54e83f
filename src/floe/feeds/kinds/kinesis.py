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
What it shares with ``kafka`` is :class:`floe.feeds.kinds.broker.BrokerFeedKind`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from floe.feeds.declarations import Feed
from floe.feeds.kinds.broker import BrokerFeedKind, BrokerSource, partition_column

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from floe.runtime import Settings
    from floe.streams import Record


class KinesisKind(BrokerFeedKind):
    KIND = "kinesis"
    ADDRESS = "stream"
    ADDRESS_TEXT = "a stream name"
    ADDRESS_MAX = 128
    SOURCE_TEXT = "stream"
    START_WORD = "at"
    PROVENANCE = {
        "_source_file": "Segment the record was read in: kinesis://<stream>/<shard>/<first>-<last> (the ledger key).",
        "_sequence_number": "<shard id>:<sequence number, 60 digits>: unique in the stream.",
        "_stream": "Kinesis stream.",
        "_shard": "Kinesis shard id.",
    }

    def positions(self, keys: Iterable[str]) -> dict[str, Any]:
        """Shard -> where to resume: after its last sequence number read; at the first
        record after a retention gap (``gap-<seq>``); or at a start time (``at-<ms>``).
        A shard whose ``end-<seq>`` marker is covered by that position (the rows up to
        it are committed) is finished: never read again (docs/streams.md)."""
        import dataclasses

        from floe.streams import parse_segment_key
        from floe.streams.kinesis import ShardPosition

        after: dict[str, int] = {}
        gap: dict[str, int] = {}
        at: dict[str, int] = {}
        end: dict[str, int] = {}
        for key in keys:
            parsed = parse_segment_key(key)
            if parsed is None:
                continue
            found = {"at": at, "gap": gap, "end": end}.get(parsed.first, after)
            found[parsed.partition] = max(found.get(parsed.partition, 0), int(parsed.last))
        out: dict[str, Any] = {s: ShardPosition(at_ms=ms) for s, ms in at.items()}
        out.update({s: ShardPosition(at_sequence=str(seq)) for s, seq in gap.items()})
        out.update(
            {
                s: ShardPosition(after=str(seq))
                for s, seq in after.items()
                if s not in gap or seq >= gap[s]
            }
        )
        for shard, seq in end.items():
            position = out.get(shard)
            if position is None:  # lost whole before any record of it was read
                if seq == 0:
                    out[shard] = ShardPosition(finished=True)
            elif seq <= (position.held or 0):
                out[shard] = dataclasses.replace(position, finished=True)
        return out

    def sequence(self, record: Record) -> str:
        """``<shard id>:<sequence number, 60 digits>``: unique in the stream and ordered in a
        shard (AWS numbers are unique per stream, a local endpoint's per shard only)."""
        return f"{record.partition}:{int(record.position):060d}"

    def last(self, records: Sequence[Record]) -> str:
        """The last sequence number of the segment."""
        return records[-1].position

    def coordinates(self, rows: DataFrame, name: str) -> DataFrame:
        from pyspark.sql import functions as F

        return rows.select("*", F.lit(name).alias("_stream"), partition_column().alias("_shard"))

    def endpoint(self, feed: Feed, settings: Settings) -> tuple[str | None, str]:
        return (settings.kinesis_endpoint, settings.aws_region)

    def open(self, endpoint: Any, name: str) -> BrokerSource:
        from floe.streams.kinesis import KinesisSource

        url, region = endpoint
        return KinesisSource(name, url, region)


KINESIS = KinesisKind()
