"""Verify a table against its checks: compute metrics in one pass, judge, record.

The one entry point shared by the dbt test (`floe_checks`), `floe dq run` and tests.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from floe.quality.analyzers import Analyzer, Metric, compute_metrics
from floe.quality.checks import Check, CheckResult, evaluate, parse_checks
from floe.quality.repository import (
    HistoryKey,
    MetricsRepository,
    history_key,
)
from floe.runtime.tables import read_fingerprint

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


@dataclass(frozen=True)
class VerificationResult:
    run_id: str
    table: str
    model: str
    snapshot_id: int | None
    metrics: list[Metric]
    results: list[CheckResult]

    @property
    def errors(self) -> list[CheckResult]:
        return [r for r in self.results if r.failed and r.severity == "error"]

    @property
    def warnings(self) -> list[CheckResult]:
        return [r for r in self.results if r.failed and r.severity == "warn"]


def verify(
    spark: SparkSession,
    table: str,
    checks: Sequence[Check] | Iterable[Any],
    *,
    model: str | None = None,
    run_id: str | None = None,
    df: DataFrame | None = None,
    repository: MetricsRepository | None = None,
    store: bool = True,
) -> VerificationResult:
    """Run `checks` (parsed or YAML specs) on `table`; append to dq.* unless store=False."""
    items = list(checks)
    parsed = items if all(isinstance(c, Check) for c in items) else parse_checks(items)
    model = model or table.split(".")[-1].strip("`")
    run_id = run_id or uuid.uuid4().hex
    frame = df if df is not None else spark.table(table)
    # The plan the metrics read also pins what they read (one analysis, not two).
    snapshot = read_fingerprint(frame) if df is None else None
    repo = repository or (MetricsRepository(spark) if store else None)
    analyzers = [c.analyzer for c in parsed]
    needs_history = any(c.anomaly is not None for c in parsed)
    # One read of the model's recorded metrics: its latest run and, for anomalies, history.
    recorded = repo.model_metrics(model) if repo is not None and (store or needs_history) else None
    last_snapshot, last_values = recorded.latest() if recorded is not None else (None, {})
    metrics = _last_run_metrics(last_snapshot, last_values, snapshot, analyzers) if store else None
    # Unchanged data, unchanged metrics: re-running a build on unchanged input changes no
    # table and recomputes nothing.
    unchanged = metrics is not None
    if metrics is None:
        # A DataFrame handed in may be costly to compute twice: cached for its passes.
        metrics = compute_metrics(frame, analyzers, cache=df is not None)
    by_key = {m.analyzer.key(): m.value for m in metrics}

    past = recorded.history(run_id) if (recorded is not None and needs_history) else {}
    results = evaluate(
        parsed,
        by_key,
        model=model,
        table=table,
        history=lambda analyzer: [v for v in past.get(history_key(analyzer), []) if v is not None],
    )
    if unchanged or (
        store and _unchanged_since_last_run(last_snapshot, last_values, snapshot, metrics)
    ):
        # Same data, same metrics: re-running a build on unchanged input changes no table.
        store = False
    if store and repo is not None:
        repo.save_run(
            run_id=run_id,
            model=model,
            table=table,
            snapshot_id=snapshot,
            metrics=metrics,
            results=results,
        )
    return VerificationResult(run_id, table, model, snapshot, metrics, results)


def _last_run_metrics(
    last_snapshot: int | None,
    last_values: dict[HistoryKey, Any],
    snapshot: int | None,
    analyzers: Sequence[Analyzer],
) -> list[Metric] | None:
    """The latest recorded run's values of ``analyzers`` when it saw the same ``snapshot``.

    ``snapshot`` pins the data (a table's snapshot, a view's fingerprint of plan and
    inputs: :func:`~floe.quality.repository.current_snapshot_id`), and metrics are a
    function of the data, so they are read back instead of computed. None — compute —
    when there is no snapshot, another one, or an analyzer the last run did not have.
    """
    if snapshot is None or last_snapshot != snapshot:
        return None
    keys = [history_key(a) for a in analyzers]
    if any(k not in last_values for k in keys):
        return None
    return [Metric(a, last_values[k]) for a, k in zip(analyzers, keys, strict=True)]


def _unchanged_since_last_run(
    last_snapshot: int | None,
    last_values: dict[HistoryKey, Any],
    snapshot: int | None,
    metrics: Sequence[Metric],
) -> bool:
    """True when the latest recorded run of the model saw this snapshot and these values."""
    current = {history_key(m.analyzer): m.value for m in metrics}
    return bool(last_values) and last_snapshot == snapshot and last_values == current
