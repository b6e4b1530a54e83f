"""One Structured Streaming query over every declared stream feed (docs/feeds.md).

A text file source per stream feed (its ``ingest_year=*/.../*.jsonl`` folders), unioned
into one query; each micro-batch (default every 100 s, the Glue window of the seed) is
handed to ``foreachBatch``, which

1. refreshes reference feeds whose change flag is newer than their last refresh
   (the flag's modification time is kept in floe's own state; the landed flag is
   never modified or deleted);
2. per feed in the batch, drops files already in the feed's ledger (so ``dbt build``
   and ``floe stream`` can take turns on one landing zone without duplicates), decodes
   the rest with the same code as the dbt raw models, appends to ``raw.<feed>``, and
   reconciles the feed's files.

Each batch (and each reference refresh between batches) holds the warehouse's writer
lock (floe.runtime.locking) while it reads the ledgers and commits, so ``dbt build``
and ``floe stream`` take turns on one warehouse instead of excluding each other for
the stream's lifetime. Empty batches do nothing. The checkpoint lives under
``Settings.state_dir``, keyed by the set of stream feeds (a new feed starts a new
checkpoint; the ledger makes the re-listing harmless). One query (not one per feed)
keeps Iceberg commits on the shared side tables sequential.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from floe.feeds import Feed, load_feeds

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from floe.runtime import Settings

log = logging.getLogger(__name__)
DEFAULT_WINDOW = "100 seconds"


class StopRequested(RuntimeError):
    """Raised inside a batch that starts after a stop was requested (it is not committed)."""


def _append(spark: SparkSession, table: str, rows: DataFrame) -> None:
    if spark.catalog.tableExists(table):
        rows.writeTo(table).append()
    else:
        rows.writeTo(table).using("iceberg").tableProperty("format-version", "2").create()


@dataclass
class StreamJob:
    spark: SparkSession
    settings: Settings
    max_files_per_trigger: int = 50
    window: str = DEFAULT_WINDOW
    available_now: bool = False
    project_dir: Path | None = None
    batches: list[dict] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _stopping: bool = False

    def __post_init__(self) -> None:
        self.project_dir = self.project_dir or self.settings.dbt_project_dir()
        feeds = load_feeds(self.project_dir)
        self.streams = [f for f in feeds if f.kind == "stream"]
        self.references = [f for f in feeds if f.kind == "reference"]

    @property
    def turn(self) -> threading.Lock:
        """Held by each file batch and reference refresh: other batches of this process
        (``floe stream``'s broker feeds) take it too, so commits stay sequential."""
        return self._lock

    @property
    def stopping(self) -> bool:
        return self._stopping

    @property
    def checkpoint(self) -> Path:
        ids = ",".join(sorted(f.id + "=" + f.landing for f in self.streams))
        digest = hashlib.sha256(ids.encode()).hexdigest()[:12]
        return self.settings.state_dir / "stream" / f"checkpoint-{digest}"

    @property
    def flag_state(self) -> Path:
        return self.settings.state_dir / "stream" / "reference_flags.json"

    def source(self) -> DataFrame:
        from pyspark.sql import functions as F

        from floe.feeds.kinds.stream import FOLDERS

        if not self.streams:
            raise RuntimeError("no stream feeds are declared (meta.floe.kind: stream)")
        frames = []
        for feed in self.streams:
            folder = self.settings.landing / feed.landing
            folder.mkdir(parents=True, exist_ok=True)
            lines = (
                self.spark.readStream.format("text")
                .option("maxFilesPerTrigger", self.max_files_per_trigger)
                .load(str(folder / FOLDERS / "*.jsonl"))
            )
            frames.append(
                lines.select(
                    F.col("value").alias("_line"),
                    F.col("_metadata.file_path").alias("_file_uri"),
                    F.lit(feed.name).alias("_feed"),
                ).where(F.length("_line") > 0)
            )
        union = frames[0]
        for other in frames[1:]:
            union = union.unionByName(other)
        return union

    # ------------------------------------------------------------------ batches

    def _refresh_state(self) -> dict[str, int]:
        try:
            return dict(json.loads(self.flag_state.read_text()))
        except (FileNotFoundError, ValueError):
            return {}

    def refresh_references(self, spark: SparkSession) -> int:
        """Ingest new extracts of every reference feed whose flag changed since its last refresh."""
        from floe.feeds.ingest import ingest, reconcile_or_raise
        from floe.feeds.kinds.reference import change_flag

        state = self._refresh_state()
        rows = 0
        for feed in self.references:
            flag = change_flag(feed, self.settings.landing)
            try:
                mtime = flag.stat().st_mtime_ns
            except FileNotFoundError:
                continue
            if state.get(feed.name) == mtime:
                continue
            result = ingest(
                spark,
                feed,
                raw_exists=spark.catalog.tableExists(feed.raw_table),
                settings=self.settings,
                project_dir=self.project_dir,  # type: ignore[arg-type]
            )
            if result.files:
                _append(spark, feed.raw_table, result.rows)
                reconcile_or_raise(spark, feed, always=True)
                rows += sum(c.loaded for c in result.counts.values())
            # Recorded after the commit: a crash in between refreshes again (the ledger
            # skips what was appended), never skips a change.
            state[feed.name] = mtime
            self.flag_state.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.flag_state.with_suffix(".tmp")
            tmp.write_text(json.dumps(state, sort_keys=True))
            tmp.replace(self.flag_state)
        return rows

    def _flags_changed(self) -> bool:
        """Whether any reference feed's change flag differs from its last refresh."""
        from floe.feeds.kinds.reference import change_flag

        state = self._refresh_state()
        for feed in self.references:
            try:
                mtime = change_flag(feed, self.settings.landing).stat().st_mtime_ns
            except FileNotFoundError:
                continue
            if state.get(feed.name) != mtime:
                return True
        return False

    def process(self, batch: DataFrame, batch_id: int) -> None:
        from floe.runtime.locking import catalog_busy, is_catalog_contention, writer_lock

        with self._lock:
            if self._stopping:
                raise StopRequested(f"batch {batch_id} not processed: stopping")
            with writer_lock(self.settings, "floe stream"):
                try:
                    self._process(batch, batch_id)
                except Exception as exc:
                    if not is_catalog_contention(exc):
                        raise
                    # A pooled catalog connection of this long-lived session kept a read
                    # snapshot from before another writer's commit (between batches, with
                    # the lock let go); in SQLite's WAL mode it cannot become a write.
                    # Nothing of the refused commit landed: replay the batch once on a
                    # fresh catalog, as after a crash (docs/reliability.md).
                    for session in {id(s): s for s in (batch.sparkSession, self.spark)}.values():
                        session._jsparkSession.sessionState().catalogManager().reset()
                    try:
                        self._process(batch, batch_id)
                    except Exception as again:
                        if is_catalog_contention(again):
                            doing = f"committing stream batch {batch_id}"
                            raise catalog_busy(self.settings, again, doing) from again
                        raise

    def _process(self, batch: DataFrame, batch_id: int) -> None:

        # The micro-batch's own session (a clone of self.spark): every read and write
        # of the batch goes through it, so they all see one catalog state.
        spark = batch.sparkSession
        summary: dict[str, Any] = {
            "batch_id": batch_id,
            "reference_rows": self.refresh_references(spark),
        }
        if batch.isEmpty():  # the seed's skip of empty windows
            self.batches.append(summary)
            return
        batch = batch.persist()
        try:
            pairs = batch.select("_feed", "_file_uri").distinct().collect()
            by_feed: dict[str, list[str]] = {}
            for feed_name, uri in pairs:
                by_feed.setdefault(feed_name, []).append(uri)
            for feed in self.streams:
                if feed.name in by_feed:
                    summary[feed.name] = self._ingest(spark, feed, batch, by_feed[feed.name])
        finally:
            batch.unpersist()
        self.batches.append(summary)

    def _ingest(self, spark: SparkSession, feed: Feed, batch: DataFrame, uris: list[str]) -> Any:
        from pyspark.sql import functions as F

        from floe.feeds import ledger
        from floe.feeds.files import file_table, uri_path
        from floe.feeds.ingest import context, reconcile_or_raise, with_load_seq
        from floe.feeds.kinds import stream

        landed = {Path(f.path): f for f in stream.discover(feed, self.settings.landing)}
        done = ledger.done_files(spark, feed, spark.catalog.tableExists(feed.raw_table))
        chosen = {}
        for uri in uris:
            f = landed.get(uri_path(uri))
            if f is not None and f.key not in done:
                chosen[uri] = f
        if not chosen:
            return []
        files = list(chosen.values())
        table = file_table(spark, files, list(chosen), stream.FILE_ATTRS)
        lines = (
            batch.where(F.col("_feed") == feed.name)
            .join(F.broadcast(table), "_file_uri")
            .select("_line", "_source_file", *(n for n, _ in stream.FILE_ATTRS))
        )
        ctx = with_load_seq(spark, context(self.settings, self.project_dir))  # type: ignore[arg-type]
        result = stream.decode(spark, feed, lines, ctx)
        ledger.record(
            spark, feed, files, result.counts, result.quarantine, ctx.ingested_at, ctx.load_seq
        )
        _append(spark, feed.raw_table, ledger.with_load_seq(result.rows, ctx.load_seq))
        reconcile_or_raise(spark, feed, always=True)
        return sorted((k, c.records_in, c.loaded, c.quarantined) for k, c in result.counts.items())

    # ------------------------------------------------------------------ running

    def poll_reference(self) -> int:
        """Between batches: refresh references whose flag changed (no batch may run for a
        long time when no stream data lands; a flag must not wait for one)."""
        from floe.runtime.locking import writer_lock

        with self._lock:
            if self._stopping or not self._flags_changed():
                return 0
            with writer_lock(self.settings, "floe stream"):
                return self.refresh_references(self.spark)

    def start(self) -> Any:
        self.poll_reference()
        writer = (
            self.source()
            .writeStream.foreachBatch(self.process)
            .option("checkpointLocation", str(self.checkpoint))
            .queryName("floe_stream")
        )
        if self.available_now:
            writer = writer.trigger(availableNow=True)
        else:
            writer = writer.trigger(processingTime=self.window)
        return writer.start()

    def request_stop(self, query: Any) -> None:
        """Stop after the batch in progress (if any) has committed its tables."""
        with self._lock:  # waits for the running batch
            self._stopping = True
        query.stop()

    def run(self, poll_seconds: float = 1.0) -> None:
        """Run until the query ends (availableNow) or :meth:`request_stop`."""
        query = self.start()
        try:
            while query.isActive:
                query.awaitTermination(poll_seconds)
                self.poll_reference()
        except Exception:
            if not self._stopping:
                raise
        if query.exception() is not None and not self._stopping:
            raise RuntimeError(f"floe stream failed: {query.exception()}")
