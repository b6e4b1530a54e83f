"""Deterministic landing-zone generator (`floe generate`), one module per domain."""

from __future__ import annotations

from collections.abc import Callable

from floe.generator import customers, dms, insurance, streams
from floe.generator.base import GenerateOptions, LandingConflictError, WriteReport

# domain name -> writer. Each writer is deterministic in (seed, days, scale, start).
DOMAINS: dict[str, Callable[[GenerateOptions], WriteReport]] = {
    "customers": customers.generate,
    "dms": dms.generate,
    "insurance": insurance.generate,
    "streams": streams.generate,
}


def generate(opts: GenerateOptions, domains: list[str] | None = None) -> WriteReport:
    report = WriteReport([], [])
    for name in domains or list(DOMAINS):
        if name not in DOMAINS:
            raise ValueError(f"unknown domain {name!r}; choose from {', '.join(DOMAINS)}")
        report = report.merge(DOMAINS[name](opts))
    return report


__all__ = ["DOMAINS", "GenerateOptions", "LandingConflictError", "WriteReport", "generate"]
