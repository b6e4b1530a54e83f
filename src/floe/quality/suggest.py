"""Constraint suggestion: checks that hold on today's data, as YAML to paste into a model.

Rules (Deequ's suggestion rules, kept few and explainable):
- `size > 0` for a non-empty table, plus a size anomaly check (at most doubling/halving);
- `is_complete(c)` when no NULL is seen; `completeness(c) >= <observed, rounded down>`
  (warn) when some are, and the column is not all NULL;
- `has_data_type(c, kind)` for text columns whose every value parses as one kind;
- `is_contained_in(c, [...])` (warn) for text/boolean columns with few distinct values;
- `is_non_negative(c)` for numeric columns whose minimum is >= 0;
- `is_unique(c)` for complete columns whose approximate distinct count is close to the
  row count, confirmed exactly (one grouping per candidate, at most `max_key_candidates`).
"""

from __future__ import annotations

import datetime as dt
import math
from typing import TYPE_CHECKING, Any

import yaml

from floe.quality.analyzers import Uniqueness, compute_metrics
from floe.quality.profile import TableProfile, profile

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

_KIND = {"Integral": "integral", "Fractional": "fractional", "Boolean": "boolean"}


def _quote(column: str) -> str:
    return column if column.isidentifier() else repr(column)


def suggest_checks(
    df: DataFrame, *, low_cardinality: int = 10, max_key_candidates: int = 5
) -> tuple[list[dict[str, Any]], TableProfile]:
    """Suggested `floe_checks` entries for `df` and the profile they came from."""
    prof = profile(df, low_cardinality=low_cardinality)
    checks: list[dict[str, Any]] = []
    if prof.row_count > 0:
        checks.append({"check": "size > 0"})
        checks.append(
            {
                "anomaly": {
                    "metric": "size",
                    "strategy": "relative_rate_of_change",
                    "max_increase": 2.0,
                    "max_decrease": 0.5,
                },
                "severity": "warn",
            }
        )
    candidates = []
    for c, p in prof.columns.items():
        name = _quote(c)
        if p.completeness is None or p.completeness == 0:
            continue
        if p.completeness == 1:
            checks.append({"check": f"is_complete({name})"})
            if p.approx_distinct >= 0.9 * prof.row_count and prof.row_count > 1:
                candidates.append(c)
        else:
            floor = math.floor(p.completeness * 100) / 100
            checks.append({"check": f"completeness({name}) >= {floor}", "severity": "warn"})
        is_text = p.spark_type == "string"
        if is_text and p.data_type in _KIND:
            checks.append({"check": f"has_data_type({name}, {_KIND[p.data_type]})"})
        # A category (repeated values), not a handful of ids in a tiny table:
        categorical = p.values is not None and prof.row_count > 2 * len(p.values)
        if p.values is not None and categorical and (is_text or p.spark_type == "boolean"):
            values = ", ".join(repr(v) for v in p.values)
            checks.append({"check": f"is_contained_in({name}, [{values}])", "severity": "warn"})
        if p.minimum is not None and p.minimum >= 0:
            checks.append({"check": f"is_non_negative({name})"})
    keys = candidates[:max_key_candidates]
    if keys:
        metrics = compute_metrics(df, [Uniqueness((c,)) for c in keys])
        for m in metrics:
            if m.value == 1.0:
                checks.append({"check": f"is_unique({_quote(m.columns[0])})"})
    return checks, prof


def suggestion_yaml(table: str, checks: list[dict[str, Any]], prof: TableProfile) -> str:
    """Checks as a `config: meta: floe_checks:` block with a header saying where from."""
    today = dt.date.today().isoformat()
    header = (
        f"# floe dq suggest {table}: {len(checks)} checks that hold on {prof.row_count} rows "
        f"profiled {today}.\n# Paste under the model in its _<dir>__models.yml and add "
        "`data_tests: [floe_checks]`; review thresholds first.\n"
    )
    body = yaml.safe_dump(
        {"config": {"meta": {"floe_checks": checks}}},
        sort_keys=False,
        default_flow_style=False,
        width=100,
        allow_unicode=True,
    )
    return header + body
