"""Ingest a feed's new landed files: discover, skip what the ledger says is done, read.

The same function serves every feed kind, the dbt raw models and ``floe stream``
(docs/feeds.md). It returns the new raw rows; the caller commits them (dbt appends
them to ``raw.<feed>``), after which :func:`reconcile_or_raise` proves, from the
tables themselves, that every file's records add up.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from floe.feeds import files as landed_files
from floe.feeds import ledger
from floe.feeds.declarations import Feed, FeedError
from floe.feeds.files import LandedFile
from floe.feeds.kinds import FeedKind, broker_kind, feed_kind
from floe.feeds.kinds.base import Batch, IngestContext, IngestResult, context, with_load_seq
from floe.runtime import settled
from floe.runtime.settings import Settings

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


# "Nothing new" (docs/feeds.md): the feed's memo in the one memo store
# (floe.runtime.settled), keyed on the landing listing and the raw table's uuid and
# snapshot right after its last complete, reconciled ingest. Any commit to the raw table
# (an ingest, an erasure, a compaction) or any other listing takes the full path.
def _nothing_new(spark: SparkSession, settings: Settings, feed: Feed, listing: str) -> bool:
    inputs = [settled.TableAt(feed.raw_table)]
    return settled.is_settled(spark, settings, settled.FEEDS, feed.id, inputs, listing)


def _remember(spark: SparkSession, settings: Settings, feed: Feed, listing: str) -> None:
    """Only after the raw rows are committed and reconciled; never fails the ingest."""
    inputs = [settled.TableAt(feed.raw_table)]
    settled.remember(spark, settings, settled.FEEDS, feed.id, inputs, listing)


# Feeds this process ingested files of since their last reconciliation (by raw table),
# with the landing listing to remember once they reconcile (None: a file was left
# waiting or skipped, or the batch was restricted, so not everything is done).
_PENDING_RECONCILIATION: dict[str, tuple[str, Settings] | None] = {}


def ingest(
    spark: SparkSession,
    feed: Feed,
    *,
    raw_exists: bool,
    settings: Settings,
    project_dir: Path,
    only: set[str] | None = None,
) -> IngestResult:
    """The feed's landed files not in its ledger, read; quarantine and manifest written.

    ``only`` restricts the batch to these ledger keys (``floe stream`` passes the files
    of its micro-batch). Nothing new: the raw table's shape with no rows.
    """
    broker = broker_kind(feed.kind)
    if broker is not None:  # read from a broker by positions: floe.feeds.consume
        result = broker.consume(
            spark, feed, raw_exists=raw_exists, settings=settings, project_dir=project_dir
        )
        if result.files:
            _PENDING_RECONCILIATION[feed.raw_table] = None
        return result
    kind = feed_kind(feed.kind)
    ctx = context(settings, project_dir)
    landed = kind.discover(feed, settings.landing)
    seen = landed_files.listing_hash(landed)
    if only is None and raw_exists and _nothing_new(spark, settings, feed, seen):
        return IngestResult(_nothing(spark, kind, feed, ctx))
    ledger.ensure_tables(spark)
    done = ledger.done_files(spark, feed, raw_exists)
    # Files ingested before and changed since are reported, never read again.
    ledger.report_changes(spark, feed, [f for f in landed if f.key in done])
    new = [f for f in landed if f.key not in done and (only is None or f.key in only)]
    # A file that may still be being written waits for a later build.
    new, waiting = landed_files.settled(new, settings.settle_seconds)
    complete = only is None and not waiting  # every file done once this batch commits
    if not new:
        if complete and raw_exists:
            _remember(spark, settings, feed, seen)
        return IngestResult(_nothing(spark, kind, feed, ctx))
    ctx = with_load_seq(spark, ctx)
    batch = kind.read(spark, feed, new, ctx)
    batch = _without_changed(batch, new)
    ledger.record(spark, feed, new, batch.counts, batch.quarantine, ctx.ingested_at, ctx.load_seq)
    skipped = any(c.skipped for c in batch.counts.values())
    _PENDING_RECONCILIATION[feed.raw_table] = (seen, settings) if complete and not skipped else None
    taken = [f.key for f in new if not batch.counts.get(f.key, ledger.FileCounts(0, 0)).skipped]
    return IngestResult(ledger.with_load_seq(batch.rows, ctx.load_seq), taken, dict(batch.counts))


def _nothing(spark: SparkSession, kind: FeedKind, feed: Feed, ctx: IngestContext) -> DataFrame:
    """The raw table's shape with no rows, as an empty local relation.

    ``limit(0)`` lets the optimizer replace the plan by an empty LocalRelation: whoever
    asks whether it has rows (dbt's "nothing new" probe) gets the answer without a Spark
    job, where the kinds' ``createDataFrame([])`` alone is an RDD scan that schedules
    one (about half a second per raw model on a busy machine).
    """
    return ledger.with_load_seq(kind.empty(spark, feed, ctx), None).limit(0)


def _without_changed(batch: Batch, files: list[LandedFile]) -> Batch:
    """``batch`` without the files that changed while they were read (any kind).

    Their counts say ``skipped`` (the ledger does not record them, so the next build
    reads them again) and their rows leave the raw and quarantine rows.
    """
    from pyspark.sql import functions as F

    counts = dict(batch.counts)
    moved = {}
    for f in files:
        why = counts.get(f.key, ledger.FileCounts(0, 0)).skipped or landed_files.changed_since(f)
        if why:
            moved[f.key] = why
    if not moved:
        return batch
    for key, why in moved.items():
        counts[key] = ledger.FileCounts(0, 0, 0, skipped=why)
    keep = ~F.col("_source_file").isin(sorted(moved))
    quarantine = batch.quarantine.where(keep) if batch.quarantine is not None else None
    return Batch(batch.rows.where(keep), counts, quarantine, batch.notes)


class ReconciliationError(FeedError):
    """Records of landed files do not add up after a commit (a bug: rows lost or doubled)."""


def reconcile_or_raise(spark: SparkSession, feed: Feed, *, always: bool = False) -> int:
    """Check every file of ``feed`` adds up (records in = loaded + quarantined).

    Runs after the raw rows were committed, when this process ingested something for
    the feed (or ``always``). Returns the number of problems found (0), else raises.
    """
    if not always and feed.raw_table not in _PENDING_RECONCILIATION:
        return 0
    problems = ledger.reconcile(spark, feed)
    pending = _PENDING_RECONCILIATION.pop(feed.raw_table, None)
    if problems:
        shown = "\n".join(f"- {p}" for p in problems[:20])
        more = f"\n... and {len(problems) - 20} more" if len(problems) > 20 else ""
        raise ReconciliationError(
            f"feed {feed.id}: records of {len(problems)} landed file(s) do not add up "
            f"(records in = rows in {feed.raw_table} + rows in {ledger.QUARANTINE}):\n"
            f"{shown}{more}"
        )
    if pending is not None:
        # Committed and reconciled: the next ingest may answer "nothing new" from the memo.
        _remember(spark, pending[1], feed, pending[0])
    return 0
