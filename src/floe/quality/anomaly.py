"""Anomaly strategies: is this run's metric value unusual given its own history?

Pure functions of (history oldest-first, current value) so they are tested on synthetic
histories; the history itself comes from `dq.metrics` (floe.quality.repository).

- `relative_rate_of_change`: current / previous must lie in [max_decrease, max_increase]
  (Deequ's RelativeRateOfChangeStrategy: `max_increase: 2.0` allows at most doubling,
  `max_decrease: 0.5` at most halving).
- `absolute_change`: current - previous must lie in [-max_decrease, max_increase]; both
  are magnitudes (a negative `max_decrease` is read as its absolute value).
- `stddev` (alias `z_score`): |current - mean(history)| <= n_sigmas * stddev(history),
  once `min_history` values exist; `window` keeps only the last N values.

With too little history a strategy answers `skip`: a new metric is not an anomaly.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass


class AnomalyConfigError(ValueError):
    """An anomaly strategy was declared with missing or contradictory parameters."""


@dataclass(frozen=True)
class Verdict:
    status: str  # "pass" | "fail" | "skip"
    reason: str = ""


UNDEFINED = Verdict("fail", "metric undefined: no rows or values")


@dataclass(frozen=True)
class RelativeRateOfChange:
    max_increase: float | None = None
    max_decrease: float | None = None

    def __post_init__(self) -> None:
        if self.max_increase is None and self.max_decrease is None:
            raise AnomalyConfigError("relative_rate_of_change needs max_increase or max_decrease")
        if self.max_decrease is not None and self.max_decrease < 0:
            raise AnomalyConfigError("relative_rate_of_change: max_decrease is a ratio >= 0")

    def detect(self, history: Sequence[float], current: float | None) -> Verdict:
        if current is None or math.isnan(current):
            return UNDEFINED
        if not history:
            return Verdict("skip", "no history yet")
        previous = history[-1]
        ratio = current / previous if previous != 0 else (1.0 if current == 0 else math.inf)
        shown = f"previous {previous:.6g}, ratio {ratio:.4g}"
        if self.max_increase is not None and ratio > self.max_increase:
            return Verdict("fail", f"{shown} > max_increase {self.max_increase}")
        if self.max_decrease is not None and ratio < self.max_decrease:
            return Verdict("fail", f"{shown} < max_decrease {self.max_decrease}")
        return Verdict("pass", shown)


@dataclass(frozen=True)
class AbsoluteChange:
    max_increase: float | None = None
    max_decrease: float | None = None

    def __post_init__(self) -> None:
        if self.max_increase is None and self.max_decrease is None:
            raise AnomalyConfigError("absolute_change needs max_increase or max_decrease")

    def detect(self, history: Sequence[float], current: float | None) -> Verdict:
        if current is None or math.isnan(current):
            return UNDEFINED
        if not history:
            return Verdict("skip", "no history yet")
        change = current - history[-1]
        shown = f"previous {history[-1]:.6g}, change {change:+.6g}"
        if self.max_increase is not None and change > self.max_increase:
            return Verdict("fail", f"{shown} > max_increase {self.max_increase}")
        if self.max_decrease is not None and -change > abs(self.max_decrease):
            return Verdict("fail", f"{shown} < -max_decrease {abs(self.max_decrease)}")
        return Verdict("pass", shown)


@dataclass(frozen=True)
class StandardDeviation:
    n_sigmas: float = 3.0
    min_history: int = 3
    window: int | None = None

    def __post_init__(self) -> None:
        if self.n_sigmas <= 0:
            raise AnomalyConfigError("stddev: n_sigmas must be > 0")
        if self.min_history < 2:
            raise AnomalyConfigError("stddev: min_history must be >= 2 (a deviation needs two)")

    def detect(self, history: Sequence[float], current: float | None) -> Verdict:
        if current is None or math.isnan(current):
            return UNDEFINED
        values = [v for v in history if v is not None and not math.isnan(v)]
        if self.window:
            values = values[-self.window :]
        if len(values) < self.min_history:
            return Verdict(
                "skip", f"{len(values)} historic values < min_history {self.min_history}"
            )
        mean = statistics.fmean(values)
        sigma = statistics.pstdev(values, mu=mean)
        if sigma == 0:
            ok = math.isclose(current, mean, rel_tol=1e-9, abs_tol=1e-12)
            reason = f"history constant at {mean:.6g}"
            return Verdict("pass" if ok else "fail", reason)
        z = (current - mean) / sigma
        shown = f"mean {mean:.6g}, stddev {sigma:.4g}, z {z:+.2f}"
        if abs(z) > self.n_sigmas:
            return Verdict("fail", f"{shown}, |z| > n_sigmas {self.n_sigmas}")
        return Verdict("pass", shown)


STRATEGIES: dict[str, type] = {
    "relative_rate_of_change": RelativeRateOfChange,
    "absolute_change": AbsoluteChange,
    "stddev": StandardDeviation,
    "z_score": StandardDeviation,
}
