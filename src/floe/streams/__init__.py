"""Broker clients for the ``kafka`` and ``kinesis`` feed kinds (docs/streams.md).

This room knows brokers, not tables: it lists a topic's partitions or a stream's
shards and fetches a *bounded* range of records from a position. Where positions are
kept (the ingestion ledger, committed with the rows) is the feed kinds' business
(:mod:`floe.feeds.consume`). It imports no other floe room.
"""

from floe.streams.records import (
    RETENTION,
    SHARD_EXPIRED,
    SHARD_GONE,
    Fetched,
    Gap,
    PositionKey,
    Record,
    StreamSourceError,
    arrival_text,
    parse_segment_key,
    segment_key,
)

__all__ = [
    "RETENTION",
    "SHARD_EXPIRED",
    "SHARD_GONE",
    "Fetched",
    "Gap",
    "PositionKey",
    "Record",
    "StreamSourceError",
    "arrival_text",
    "parse_segment_key",
    "segment_key",
]
