"""The metrics repository: every computed metric and check result, appended per run.

Two Iceberg tables in the `dq` schema, created on first use:

- `dq.metrics` — run_id, model, table_name, snapshot_id (the Iceberg snapshot the metric
  was computed on; for a view, a negative fingerprint of its plan and of the snapshots
  of the tables it reads, see :func:`current_snapshot_id`), analyzer, columns (comma-joined), argument (the
  analyzer's non-column parameter, e.g. a regex or quantile), filter, value, computed_at.
- `dq.check_results` — one row per check per run, with expected / actual / status.

History for anomaly detection is read back from `dq.metrics` by (model, analyzer,
columns, argument, filter), oldest first.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from floe.quality.analyzers import Analyzer, Metric
from floe.quality.checks import CheckResult
from floe.runtime.frames import local_frame
from floe.runtime.session import create_table_if_missing
from floe.runtime.tables import read_fingerprint

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

METRICS_TABLE = "dq.metrics"
RESULTS_TABLE = "dq.check_results"

METRICS_SCHEMA = (
    "run_id string, model string, table_name string, snapshot_id bigint, analyzer string, "
    "columns string, argument string, filter string, value double, computed_at timestamp"
)
RESULTS_SCHEMA = (
    "run_id string, model string, table_name string, snapshot_id bigint, check string, "
    "severity string, status string, expected string, actual double, message string, "
    "checked_at timestamp"
)

HistoryKey = tuple[str, str, str | None, str | None]


def history_key(analyzer: Analyzer) -> HistoryKey:
    return (analyzer.name, ",".join(analyzer.columns), analyzer.argument, analyzer.where)


def current_snapshot_id(spark: SparkSession, table: str) -> int | None:
    """What a read of `table` sees now, as a number that is equal only for the same data.

    A table: its current Iceberg snapshot id (None while it has none). A view: a
    negative fingerprint of its plan and of the Iceberg tables it reads
    (:func:`floe.runtime.tables.read_fingerprint`); None when it cannot be pinned.
    """
    try:
        frame = spark.table(table)
    except Exception:  # not a relation Spark can resolve: nothing to pin the metric to
        return None
    return read_fingerprint(frame)


@dataclass(frozen=True)
class ModelMetrics:
    """A model's recorded metrics: (computed_at, run_id, snapshot_id, key, value), oldest first.

    One read serves both questions a check run asks: the latest run (was the data the
    same?) and the history (anomaly checks).
    """

    rows: list[tuple[Any, str, int | None, HistoryKey, Any]]

    def latest(self) -> tuple[int | None, dict[HistoryKey, Any]]:
        """(snapshot id, {metric: value}) of the latest run (the one computed last)."""
        if not self.rows:
            return None, {}
        last_run = self.rows[-1][1]
        mine = [r for r in self.rows if r[1] == last_run]
        return mine[0][2], {key: value for _, _, _, key, value in mine}

    def history(self, exclude_run: str | None = None) -> dict[HistoryKey, list]:
        """All values per metric, oldest first, without run ``exclude_run``."""
        out: dict[HistoryKey, list] = {}
        for _, run_id, _, key, value in self.rows:
            if run_id != exclude_run:
                out.setdefault(key, []).append(value)
        return out


@dataclass
class MetricsRepository:
    spark: SparkSession
    metrics_table: str = METRICS_TABLE
    results_table: str = RESULTS_TABLE
    _ensured: bool = field(default=False, repr=False)

    def ensure_tables(self) -> None:
        if self._ensured:
            return
        for table, schema in (
            (self.metrics_table, METRICS_SCHEMA),
            (self.results_table, RESULTS_SCHEMA),
        ):
            # Checks run in parallel (dbt threads): create_table_if_missing survives the race.
            create_table_if_missing(
                self.spark, table, f"create table if not exists {table} ({schema}) using iceberg"
            )
        self._ensured = True

    def model_metrics(self, model: str) -> ModelMetrics:
        """Every recorded metric of `model`, in one read (a filter, no sort or window)."""
        self.ensure_tables()
        rows = self.spark.sql(
            "select run_id, computed_at, snapshot_id, analyzer, columns, argument, filter, value "
            f"from {self.metrics_table} where model = :model",
            args={"model": model},
        ).collect()
        return ModelMetrics(
            sorted(
                (
                    (
                        r.computed_at,
                        r.run_id,
                        r.snapshot_id,
                        (r.analyzer, r.columns or "", r.argument, r.filter),
                        r.value,
                    )
                    for r in rows
                ),
                key=lambda row: (row[0], row[1]),
            )
        )

    def save_metrics(
        self,
        *,
        run_id: str,
        model: str,
        table: str,
        snapshot_id: int | None,
        metrics: Sequence[Metric],
        computed_at: dt.datetime,
    ) -> None:
        self.ensure_tables()
        rows = [
            (
                run_id,
                model,
                table,
                snapshot_id,
                m.analyzer.name,
                ",".join(m.analyzer.columns),
                m.analyzer.argument,
                m.analyzer.where,
                m.value,
                computed_at,
            )
            for m in metrics
        ]
        self._append(self.metrics_table, METRICS_SCHEMA, rows)

    def save_results(
        self,
        *,
        run_id: str,
        snapshot_id: int | None,
        results: Sequence[CheckResult],
        checked_at: dt.datetime,
    ) -> None:
        self.ensure_tables()
        rows = [
            (
                run_id,
                r.model,
                r.table,
                snapshot_id,
                r.check,
                r.severity,
                r.status,
                r.expected,
                r.actual,
                r.message,
                checked_at,
            )
            for r in results
        ]
        self._append(self.results_table, RESULTS_SCHEMA, rows)

    def save_run(
        self,
        *,
        run_id: str,
        model: str,
        table: str,
        snapshot_id: int | None,
        metrics: Sequence[Metric],
        results: Sequence[CheckResult],
    ) -> None:
        """One verification run: its metrics and its check results, stamped alike."""
        now = dt.datetime.now(dt.UTC)
        self.save_metrics(
            run_id=run_id,
            model=model,
            table=table,
            snapshot_id=snapshot_id,
            metrics=metrics,
            computed_at=now,
        )
        self.save_results(run_id=run_id, snapshot_id=snapshot_id, results=results, checked_at=now)

    def _append(self, table: str, schema: str, rows: list[tuple[Any, ...]]) -> None:
        if rows:
            local_frame(self.spark, rows, schema).writeTo(table).append()
