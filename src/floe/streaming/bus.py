"""Continuous consumption of the broker feeds (kinds ``kafka``, ``kinesis``).

Every window (100 s by default, the Glue streaming window of the seeds) each broker
feed gets one micro-batch (docs/streams.md): under the warehouse's writer lock
(floe.runtime.locking), :func:`floe.feeds.consume.consume` reads a bounded range per
partition / shard and writes its ledger rows, the raw rows are appended in one
Iceberg commit, and the feed's segments are reconciled. A batch that read nothing
commits nothing. A stop request (SIGTERM / SIGINT) is honoured between batches; a
kill at any moment is harmless: the positions are the committed tables.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from floe.feeds import Feed, FeedError
from floe.feeds.kinds import BrokerKind, broker_kind

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from floe.runtime import Settings

log = logging.getLogger(__name__)
BUS_KINDS = ("kafka", "kinesis")
DEFAULT_WINDOW_SECONDS = 100.0


@dataclass(frozen=True)
class BatchSummary:
    """One feed's micro-batch: segments committed, records in / loaded / quarantined."""

    feed: str
    segments: int
    records_in: int
    loaded: int
    quarantined: int


@dataclass
class BusJob:
    spark: SparkSession
    settings: Settings
    project_dir: Path
    feeds: list[Feed]
    window_seconds: float = DEFAULT_WINDOW_SECONDS
    max_records: int | None = None
    max_bytes: int | None = None
    stop: threading.Event = field(default_factory=threading.Event)
    batches: list[BatchSummary] = field(default_factory=list)
    on_batch: Callable[[BatchSummary], None] | None = None  # after each commit
    # Taken around each feed's batch: ``floe stream`` passes the file query's lock so
    # the two kinds of batch commit to the shared side tables one after the other.
    turn: AbstractContextManager[object] = field(default_factory=contextlib.nullcontext)
    owner: str = "floe consume"  # the writer lock's owner name

    def run_once(self) -> list[BatchSummary]:
        """One micro-batch of every feed (each under the writer lock)."""
        from floe.feeds.ingest import reconcile_or_raise
        from floe.runtime.locking import writer_lock

        done = []
        for feed in self.feeds:
            if self.stop.is_set():
                break
            with self.turn, writer_lock(self.settings, self.owner):
                result = _broker(feed).consume(
                    self.spark,
                    feed,
                    raw_exists=self.spark.catalog.tableExists(feed.raw_table),
                    settings=self.settings,
                    project_dir=self.project_dir,
                    max_records=self.max_records,
                    max_bytes=self.max_bytes,
                )
                if not result.files:
                    continue  # nothing read: nothing committed
                append(self.spark, feed.raw_table, result.rows)
                reconcile_or_raise(self.spark, feed, always=True)
            summary = BatchSummary(
                feed.name,
                len(result.files),
                sum(c.records_in for c in result.counts.values()),
                sum(c.loaded for c in result.counts.values()),
                sum(c.quarantined for c in result.counts.values()),
            )
            log.info("%s", summary)
            if self.on_batch is not None:
                self.on_batch(summary)
            done.append(summary)
        self.batches.extend(done)
        return done

    def run(self, *, until_idle: bool = False) -> None:
        """Batches every window until :attr:`stop` is set (or, ``until_idle``, until a
        round of batches reads nothing)."""
        while not self.stop.is_set():
            started = time.monotonic()
            done = self.run_once()
            if until_idle and not done:
                return
            if until_idle:
                continue
            self.stop.wait(max(0.0, self.window_seconds - (time.monotonic() - started)))


def append(spark: SparkSession, table: str, rows: object) -> None:
    """Append ``rows`` to ``table`` in one Iceberg commit (created on first use)."""
    from pyspark.sql import DataFrame

    assert isinstance(rows, DataFrame)
    if spark.catalog.tableExists(table):
        rows.writeTo(table).append()
    else:
        rows.writeTo(table).using("iceberg").tableProperty("format-version", "2").create()


def bus_feeds(feeds: list[Feed], names: tuple[str, ...] = ()) -> list[Feed]:
    """The broker feeds among ``feeds`` (those named, when names are given)."""
    chosen = [
        f for f in feeds if f.kind in BUS_KINDS and (not names or {f.name, f.id} & set(names))
    ]
    missing = sorted(set(names) - {f.name for f in chosen} - {f.id for f in chosen})
    if missing:
        from floe.feeds import FeedError

        raise FeedError(
            f"no kafka/kinesis feed called {', '.join(missing)} is declared (see the sources YAML)"
        )
    return chosen


def _broker(feed: Feed) -> BrokerKind:
    kind = broker_kind(feed.kind)
    if kind is None:
        raise FeedError(f"feed {feed.id}: kind {feed.kind} is not read from a broker")
    return kind
