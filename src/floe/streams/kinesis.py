"""Bounded fetches from a Kinesis data stream (boto3; AWS or a local endpoint).

Shards are listed on every batch, so split and merged shards are followed: a child
shard is read once its parents are drained (closed and read to their end), so the
records of one partition key stay in order. No checkpoint table (as the KCL keeps)
is used: the positions are the last sequence number floe committed per shard.

Retention gaps: a shard is resumed *at* its last committed sequence number, not after
it, so the first record returned must be that one. When it is not (the record expired:
the stream's retention trimmed the shard past floe's position), the records between it
and the first one returned may have expired unread: a :class:`~floe.streams.Gap`
(``missing`` unknown, as Kinesis sequence numbers are not contiguous) is reported and
the read goes on from the oldest record left (docs/streams.md, "Retention gaps").

Whole shards: a closed shard read to its end is *finished* (an ``ends`` entry the
ledger keeps as an ``end`` segment) and never read again. A shard floe holds a
position in that is not finished yet is lost whole when it is no longer listed (the
stream's retention outlived it: :data:`~floe.streams.records.SHARD_GONE`) or when it
is closed and its position's record and every one after it expired
(:data:`~floe.streams.records.SHARD_EXPIRED`): either way a :class:`Gap` that ends
the shard, never a silent skip.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from floe.streams.records import (
    SHARD_EXPIRED,
    SHARD_GONE,
    Fetched,
    Gap,
    Record,
    StreamSourceError,
)

MAX_GET_RECORDS = 10_000  # Kinesis' own per-call limit


@dataclass(frozen=True)
class ShardPosition:
    """Where to resume a shard: after a sequence number, at one (the first record after
    a retention gap), or at a time (ms)."""

    after: str | None = None
    at_ms: int | None = None
    at_sequence: str | None = None
    finished: bool = False  # closed and drained, or expired whole: never read again

    @property
    def held(self) -> int | None:
        """The last sequence number accounted for (read, or in a recorded gap); None
        before any record of the shard was."""
        if self.after is not None:
            return int(self.after)
        if self.at_sequence is not None:
            return int(self.at_sequence) - 1
        return None


@dataclass
class KinesisSource:
    stream: str
    endpoint: str | None
    region: str
    _client: Any = field(default=None, repr=False)

    def client(self) -> Any:
        if self._client is None:
            import boto3

            self._client = boto3.client(
                "kinesis", endpoint_url=self.endpoint, region_name=self.region
            )
        return self._client

    def close(self) -> None:
        self._client = None

    def shards(self) -> list[dict[str, Any]]:
        from botocore.exceptions import BotoCoreError, ClientError

        shards: list[dict[str, Any]] = []
        kwargs: dict[str, Any] = {"StreamName": self.stream}
        try:
            while True:
                page = self.client().list_shards(**kwargs)
                shards.extend(page["Shards"])
                token = page.get("NextToken")
                if not token:
                    return shards
                kwargs = {"NextToken": token}
        except (BotoCoreError, ClientError) as exc:
            raise StreamSourceError(
                f"Kinesis stream {self.stream!r} cannot be listed at "
                f"{self.endpoint or 'the AWS endpoint'} ({exc}); check the stream name "
                "(meta.floe.stream) and FLOE_KINESIS_ENDPOINT / AWS credentials"
            ) from exc

    def fetch(
        self,
        positions: dict[str, ShardPosition],
        starting_position: str | datetime,
        *,
        max_records: int,
        max_bytes: int,
        now: datetime | None = None,
    ) -> Fetched:
        """Records of every readable shard from its position on, at most the caps."""
        shards = self.shards()
        listed = {s["ShardId"] for s in shards}
        drained = {sid for sid, p in positions.items() if p.finished}
        records: dict[str, list[Record]] = {}
        starts: dict[str, str] = {}
        ends: dict[str, str] = {}
        total = size = 0
        gaps = [
            Gap(sid, _after(p.held), None, None, SHARD_GONE, ends_partition=True)
            for sid, p in sorted(positions.items())
            if sid not in listed and not p.finished
        ]
        pending = sorted(
            (s for s in shards if s["ShardId"] not in drained),
            key=lambda s: int(s["SequenceNumberRange"]["StartingSequenceNumber"]),
        )
        progress = True
        while pending and progress and total < max_records and size < max_bytes:
            progress = False
            waiting = []
            for shard in pending:
                sid = shard["ShardId"]
                parents = [
                    p for p in (shard.get("ParentShardId"), shard.get("AdjacentParentShardId")) if p
                ]
                if any(p in listed and p not in drained for p in parents):
                    waiting.append(shard)
                    continue
                progress = True
                position = positions.get(sid)
                if position is None and starting_position != "earliest" and not parents:
                    moment = (
                        starting_position
                        if isinstance(starting_position, datetime)
                        else (now or datetime.now(UTC))
                    )
                    starts[sid] = str(int(moment.timestamp() * 1000))
                    continue
                ending = shard["SequenceNumberRange"].get("EndingSequenceNumber") or None
                found = len(gaps)
                got, done = self._read(
                    sid, position, max_records - total, max_bytes - size, ending=ending, gaps=gaps
                )
                if got:
                    records[sid] = got
                    total += len(got)
                    size += sum(len(r.value) for r in got)
                if done:
                    drained.add(sid)
                    held = got[-1].position if got else _held(position)
                    ended = any(g.ends_partition for g in gaps[found:])
                    if ending is not None and held is not None and not ended:
                        ends[sid] = held
            pending = waiting
        return Fetched(records, gaps, starts, ends)

    def _read(
        self,
        shard: str,
        position: ShardPosition | None,
        max_records: int,
        max_bytes: int,
        *,
        ending: str | None = None,
        gaps: list[Gap] | None = None,
    ) -> tuple[list[Record], bool]:
        """(records, whether the shard is closed and read to its end).

        A closed shard (``ending``: its ending sequence number) is drained when its
        iterator ends, or (endpoints that keep handing out iterators) when a read
        from the position finds nothing more. Resuming after a sequence number reads
        *at* it and checks that it is still there (module docstring); a retention gap
        is appended to ``gaps`` — one that ends the shard when a closed shard has
        nothing left at all.
        """
        closed = ending is not None
        client = self.client()
        iterator, check = self._iterator(shard, position)
        out: list[Record] = []
        size = 0
        while iterator and len(out) < max_records and size < max_bytes:
            page = client.get_records(
                ShardIterator=iterator,
                Limit=min(MAX_GET_RECORDS, max_records - len(out) + (check is not None)),
            )
            items = page["Records"]
            if check is not None and items:
                first = items[0]["SequenceNumber"]
                if first == check:
                    items = items[1:]  # the last record committed: still there
                elif gaps is not None:
                    gaps.append(Gap(shard, str(int(check) + 1), str(int(first) - 1), None))
                check = None
            for item in items:
                if len(out) >= max_records or size >= max_bytes:
                    return out, False
                arrival = item.get("ApproximateArrivalTimestamp")
                out.append(
                    Record(
                        shard,
                        item["SequenceNumber"],
                        item.get("PartitionKey"),
                        int(arrival.timestamp() * 1000) if arrival is not None else None,
                        bytes(item["Data"]),
                    )
                )
                size += len(item["Data"])
            iterator = page.get("NextShardIterator")
            if not page["Records"]:
                drained = iterator is None or closed
                if drained and check is not None and gaps is not None:
                    # the position's record and all after it expired: the shard is gone
                    first = str(int(check) + 1)
                    gaps.append(Gap(shard, first, ending, None, SHARD_EXPIRED, True))
                return out, drained
        return out, iterator is None

    def _iterator(self, shard: str, position: ShardPosition | None) -> tuple[str, str | None]:
        """(shard iterator, sequence number its first record must carry, or None)."""
        from botocore.exceptions import ClientError

        client = self.client()
        kwargs: dict[str, Any] = {"StreamName": self.stream, "ShardId": shard}
        check = None
        if position is None:
            kwargs["ShardIteratorType"] = "TRIM_HORIZON"
        elif position.after is not None:
            kwargs["ShardIteratorType"] = "AT_SEQUENCE_NUMBER"
            kwargs["StartingSequenceNumber"] = check = position.after
        elif position.at_sequence is not None:
            kwargs["ShardIteratorType"] = "AT_SEQUENCE_NUMBER"
            kwargs["StartingSequenceNumber"] = position.at_sequence
        else:
            kwargs["ShardIteratorType"] = "AT_TIMESTAMP"
            kwargs["Timestamp"] = datetime.fromtimestamp((position.at_ms or 0) / 1000, UTC)
        try:
            return client.get_shard_iterator(**kwargs)["ShardIterator"], check
        except ClientError as exc:
            if check is None or exc.response["Error"]["Code"] != "InvalidArgumentException":
                raise
        # The position's record is gone and the endpoint refuses it: from the oldest
        # record left, every record before that one counted as a possible gap.
        kwargs = {"StreamName": self.stream, "ShardId": shard, "ShardIteratorType": "TRIM_HORIZON"}
        return client.get_shard_iterator(**kwargs)["ShardIterator"], check


def _held(position: ShardPosition | None) -> str | None:
    held = position.held if position is not None else None
    return None if held is None else str(held)


def _after(held: int | None) -> str:
    """The first sequence number after ``held`` (0: from the shard's start)."""
    return "0" if held is None else str(held + 1)
