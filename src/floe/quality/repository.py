"""The metrics repository: every computed metric and check result, appended per run.

Two Iceberg tables in the `dq` schema, created on first use:

- `dq.metrics` — run_id, model, table_name, snapshot_id (the Iceberg snapshot the metric
  was computed on; NULL for views), analyzer, columns (comma-joined), argument (the
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
from floe.runtime.spark import create_table_if_missing

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
    """The snapshot a read of `table` sees now; None for views and non-Iceberg relations."""
    try:
        rows = spark.sql(f"select snapshot_id from {table}.refs where name = 'main'").collect()
    except Exception:  # views, temp views, files: no snapshot to pin the metric to
        return None
    return int(rows[0][0]) if rows else None


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

    def history(self, model: str, *, exclude_run: str | None = None) -> dict[HistoryKey, list]:
        """All earlier values per metric of `model`, oldest first."""
        self.ensure_tables()
        rows = self.spark.sql(
            f"select analyzer, columns, argument, filter, value from {self.metrics_table} "
            "where model = :model and run_id <> :run order by computed_at, run_id",
            args={"model": model, "run": exclude_run or ""},
        ).collect()
        out: dict[HistoryKey, list] = {}
        for r in rows:
            key = (r.analyzer, r.columns or "", r.argument, r.filter)
            out.setdefault(key, []).append(r.value)
        return out

    def latest_values(self, model: str) -> tuple[int | None, dict[HistoryKey, Any]]:
        """(snapshot id, {metric: value}) of the latest recorded run of `model`."""
        self.ensure_tables()
        # One read of the model's rows; the window picks the latest run (was a join of
        # two reads: three Spark jobs per check run, for a few hundred rows).
        rows = self.spark.sql(
            "select snapshot_id, analyzer, columns, argument, filter, value from ("
            "select *, max_by(run_id, computed_at) over () as last_run "
            f"from {self.metrics_table} where model = :model) where run_id = last_run",
            args={"model": model},
        ).collect()
        values = {(r.analyzer, r.columns or "", r.argument, r.filter): r.value for r in rows}
        return (rows[0].snapshot_id if rows else None), values

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

    def _append(self, table: str, schema: str, rows: list[tuple[Any, ...]]) -> None:
        if rows:
            self.spark.createDataFrame(rows, schema).writeTo(table).append()
