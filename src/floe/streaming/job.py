"""One Structured Streaming query over every landed stream (SPEC §5 continuous mode).

The text source watches ``<landing>/streams/*/ingest_year=*/.../*.jsonl``; each
micro-batch (default every 100 s, the Glue window of the seed) is handed to
``foreachBatch``, which

1. refreshes the product priority reference only if ``_CHANGED`` is there, then
   removes the flag (the seed's change-file pattern);
2. per stream in the batch, drops files already in the stream's ledger (so batch
   ``dbt build`` and ``floe stream`` can take turns on one landing zone without
   duplicates) and runs the same :func:`floe.decode.ingest.ingest_lines` as the dbt
   models, appending to the same raw.<stream> / raw.quarantine / raw.stream_files.

Empty batches do nothing. The checkpoint lives under ``Settings.state_dir``, so a
restart resumes where the last committed batch ended. One query (not one per
stream) keeps Iceberg commits on the shared side tables sequential.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from floe.decode.ingest import ingest_lines, ingested_files
from floe.decode.reference import change_flag, clear_change_flag, read_new_reference_files
from floe.decode.specs import STREAMS, sync_local_registry

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from floe.runtime import Settings

log = logging.getLogger(__name__)
REFERENCE_TABLE = "raw.product_priority"
DEFAULT_WINDOW = "100 seconds"


class StopRequested(RuntimeError):
    """Raised inside a batch that starts after a stop was requested (it is not committed)."""


@dataclass
class StreamJob:
    spark: SparkSession
    settings: Settings
    max_files_per_trigger: int = 50
    window: str = DEFAULT_WINDOW
    available_now: bool = False
    batches: list[dict] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _stopping: bool = False

    @property
    def stopping(self) -> bool:
        return self._stopping

    @property
    def checkpoint(self) -> Path:
        return self.settings.state_dir / "stream" / "checkpoint"

    def source(self) -> DataFrame:
        from pyspark.sql import functions as F

        from floe.decode.core import relative_source

        pattern = (
            self.settings.landing
            / "streams"
            / "*"
            / "ingest_year=*"
            / "ingest_month=*"
            / "ingest_day=*"
            / "ingest_hour=*"
            / "*.jsonl"
        )
        lines = (
            self.spark.readStream.format("text")
            .option("maxFilesPerTrigger", self.max_files_per_trigger)
            .load(str(pattern))
        )
        return lines.select(
            F.col("value").alias("_line"),
            relative_source(F.input_file_name()).alias("_source_file"),
        ).where(F.length("_line") > 0)

    # ------------------------------------------------------------------ batches

    def refresh_reference(self, spark: SparkSession) -> int:
        """Append new reference extracts if ``_CHANGED`` is there; remove the flag after."""
        if not change_flag(self.settings.landing).exists():
            return 0
        exists = spark.catalog.tableExists(REFERENCE_TABLE)
        seen = (
            {
                r[0]
                for r in self.spark.sql(
                    f"select distinct _source_file from {REFERENCE_TABLE}"
                ).collect()
            }
            if exists
            else set()
        )
        rows = read_new_reference_files(spark, self.settings.landing, seen)
        count = rows.count()
        if count:
            if exists:
                rows.writeTo(REFERENCE_TABLE).append()
            else:
                rows.writeTo(REFERENCE_TABLE).using("iceberg").create()
        clear_change_flag(self.settings.landing)
        return count

    def process(self, batch: DataFrame, batch_id: int) -> None:
        with self._lock:
            if self._stopping:
                raise StopRequested(f"batch {batch_id} not processed: stopping")
            self._process(batch, batch_id)

    def _process(self, batch: DataFrame, batch_id: int) -> None:
        from pyspark.sql import functions as F

        # The micro-batch's own session (a clone of self.spark): every read and write
        # of the batch goes through it, so they all see one catalog state.
        spark = batch.sparkSession
        summary: dict = {"batch_id": batch_id, "reference_rows": self.refresh_reference(spark)}
        if batch.isEmpty():  # the seed's skip of empty windows
            self.batches.append(summary)
            return
        batch = batch.persist()
        stream_of = F.regexp_extract("_source_file", r"^streams/([^/]+)/", 1)
        pairs = batch.select(stream_of.alias("s"), "_source_file").distinct().collect()
        by_stream: dict[str, set[str]] = {}
        for stream, source in pairs:
            by_stream.setdefault(stream, set()).add(source)
        sync_local_registry(self.settings.state_dir)
        for stream in sorted(by_stream):
            spec = STREAMS.get(stream)
            if spec is None:
                log.warning("ignoring files of unknown stream %s", stream)
                continue
            new = sorted(by_stream[stream] - ingested_files(spark, spec))
            if not new:
                continue
            lines = batch.where(F.col("_source_file").isin(new))
            good, counts = ingest_lines(spark, spec, lines, new, self.settings.state_dir)
            if spark.catalog.tableExists(spec.table):
                good.writeTo(spec.table).append()
            else:
                good.writeTo(spec.table).using("iceberg").create()
            summary[stream] = counts
        batch.unpersist()
        self.batches.append(summary)

    # ------------------------------------------------------------------ running

    def poll_reference(self) -> int:
        """Between batches: refresh the reference if the flag appeared (no batch may run
        for a long time when no stream data lands; the flag must not wait for one)."""
        with self._lock:
            if self._stopping:
                return 0
            return self.refresh_reference(self.spark)

    def start(self):
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

    def request_stop(self, query) -> None:
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
