"""What a broker fetch returns, and how a fetched range is named in the ledger.

A *segment* is one partition's (or shard's) records read by one micro-batch. Its
ledger key names the source, the partition and the range, so the positions to resume
from are a pure function of the ledger's done keys (docs/streams.md, "Positions")::

    kafka://<topic>/<partition>/<first>-<next>      offsets; next = last + 1
    kinesis://<stream>/<shard>/<first>-<last>       sequence numbers (last read)

A segment that carries no records but moves a position has a word for ``<first>``:
``start`` (Kafka: a starting position of ``latest`` or a timestamp; ``<last>`` is the
next offset), ``at`` (Kinesis: the same, ``<last>`` is the time in ms to start at),
``gap`` (offsets that expired before they were read; ``<last>`` is the next
position after them), ``end`` (Kinesis: the shard is finished — closed and drained,
or expired whole; ``<last>`` is the shard's position when it finished, so the marker
counts only once the rows up to it are committed).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime

SCHEMES = ("kafka", "kinesis")
_KEY = re.compile(
    r"^(?P<scheme>kafka|kinesis)://(?P<name>[^/]+)/(?P<part>[^/]+)/"
    r"(?P<first>[A-Za-z0-9]+)-(?P<last>[0-9]+)$"
)


def arrival_text(timestamp_ms: int | None) -> str | None:
    """A broker timestamp (ms since the epoch) as ISO text in UTC."""
    if timestamp_ms is None or timestamp_ms < 0:
        return None
    moment = datetime.fromtimestamp(timestamp_ms / 1000, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{timestamp_ms % 1000:03d}Z"


class StreamSourceError(RuntimeError):
    """A broker cannot be reached or refuses a request; the message names it and the fix."""


@dataclass(frozen=True)
class Record:
    """One record as the broker returned it."""

    partition: str  # Kafka partition number as text, or Kinesis shard id
    position: str  # Kafka offset as text, or Kinesis sequence number
    key: str | None
    timestamp_ms: int | None  # broker (append / arrival) time
    value: bytes


# Why positions went missing (``raw.stream_gaps.reason``).
RETENTION = "retention"  # records before the oldest one left expired unread
SHARD_EXPIRED = "shard_expired"  # a closed shard whose records all expired unread
SHARD_GONE = "shard_gone"  # a shard floe held a position in is no longer listed


@dataclass(frozen=True)
class Gap:
    """Positions that expired before they were read (a retention gap)."""

    partition: str
    first: str  # first position missing
    last: str | None  # last position missing (None: unknown, a shard gone whole)
    missing: int | None  # how many offsets (None: unknown, Kinesis)
    reason: str = RETENTION
    # True: nothing more will be read from the partition (the shard expired whole);
    # its ledger marker is an ``end`` segment instead of a ``gap`` one.
    ends_partition: bool = False


@dataclass
class Fetched:
    """One bounded fetch: records per partition, gaps found, new-position markers."""

    records: dict[str, list[Record]]
    gaps: list[Gap]
    # partition -> position the consumer starts from with no record read yet
    # (a starting position of ``latest`` or a timestamp): kept as a ``start`` segment.
    starts: dict[str, str]
    # partition -> its position, for a closed shard read to its end in this fetch:
    # kept as an ``end`` segment (the shard is not read again, even once it is gone).
    ends: dict[str, str] = field(default_factory=dict)

    @property
    def count(self) -> int:
        return sum(len(r) for r in self.records.values())

    @property
    def bytes(self) -> int:
        return sum(len(r.value) for rs in self.records.values() for r in rs)


@dataclass(frozen=True)
class PositionKey:
    """A parsed segment key."""

    scheme: str
    name: str
    partition: str
    first: str
    last: str


def segment_key(scheme: str, name: str, partition: str, first: str, last: str) -> str:
    """The ledger key of a segment (see the module docstring)."""
    if scheme not in SCHEMES:
        raise ValueError(f"scheme {scheme!r} is not one of {', '.join(SCHEMES)}")
    return f"{scheme}://{name}/{partition}/{first}-{last}"


def parse_segment_key(key: str) -> PositionKey | None:
    """The parts of a segment key, or None for a key that is not one (a landed file)."""
    match = _KEY.match(key)
    if match is None:
        return None
    return PositionKey(match["scheme"], match["name"], match["part"], match["first"], match["last"])
