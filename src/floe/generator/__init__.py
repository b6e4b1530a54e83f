"""Deterministic landing-zone generator (``floe generate``), driven by the feed declarations.

Every declared feed (floe.feeds) gets demo files from its kind's demo writer
(floe.generator.writers), laid out with the kind's own layout helpers; the content comes
from ``meta.floe.demo`` (floe.generator.demo) or is drawn from the feed's columns /
registry schema (floe.generator.synth). Output is
deterministic in (seed, days, scale, start) and per feed, so adding a feed changes no
other feed's files.
"""

from __future__ import annotations

import functools
import multiprocessing
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor

from floe.feeds import Feed, FeedError, load_feeds
from floe.generator.base import (
    GenerateOptions,
    LandingConflictError,
    WriteReport,
    default_jobs,
)
from floe.generator.writers import write_demo


def select_feeds(feeds: Sequence[Feed], names: Sequence[str]) -> list[Feed]:
    """Feeds named by source (``streams``), feed (``ventilator``) or id (``streams.ventilator``)."""
    if not names:
        return list(feeds)
    chosen = [f for f in feeds if {f.source, f.name, f.id} & set(names)]
    known = {x for f in feeds for x in (f.source, f.name, f.id)}
    unknown = sorted(set(names) - known)
    if unknown:
        raise FeedError(
            f"no feed or source named {', '.join(unknown)}; declared: "
            + ", ".join(f.id for f in feeds)
        )
    return chosen


def generate(
    opts: GenerateOptions, names: Sequence[str] = (), feeds: Sequence[Feed] | None = None
) -> WriteReport:
    """Write the demo files of the named feeds (all declared feeds of the options' project
    when ``names`` is empty)."""
    declared = load_feeds(opts.project()) if feeds is None else list(feeds)
    chosen = select_feeds(declared, names)
    if opts.jobs <= 1 or len(chosen) <= 1:
        reports = [_write_feed(feed, opts) for feed in chosen]
        return functools.reduce(WriteReport.merge, reports, WriteReport([], []))
    # Feeds side by side, one process each at a time: every feed's bytes depend only on the
    # feed and the options (its own random stream), and each file is written atomically,
    # so the landing is the same as in one process. "spawn", not fork: the caller may be
    # a process with a JVM gateway's threads (floe build, the tests).
    context = multiprocessing.get_context("spawn")
    workers = min(opts.jobs, len(chosen))
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        futures = [pool.submit(_write_feed, feed, opts) for feed in chosen]
        try:
            reports = [future.result() for future in futures]
        except BaseException:
            # The first failure is the caller's at once: feeds not started are not written
            # (as in one process, which stops at the failing feed); started ones finish
            # their atomic writes.
            pool.shutdown(wait=True, cancel_futures=True)
            raise
    return functools.reduce(WriteReport.merge, reports, WriteReport([], []))


def _write_feed(feed: Feed, opts: GenerateOptions) -> WriteReport:
    """One feed's demo files, in a worker process."""
    report = WriteReport([], [])
    write_demo(feed, opts, report)
    return report


__all__ = [
    "GenerateOptions",
    "LandingConflictError",
    "WriteReport",
    "default_jobs",
    "generate",
    "select_feeds",
]
