"""Per-statement Spark settings and retries of refused row-level statements (``docs/runtime.md``).

A statement asks for Spark settings of its own with a ``/* floe:<name> */`` comment
("Statement settings"); a DELETE/MERGE that Iceberg refused as concurrently modified
before it wrote anything is run again ("Concurrent writers").
"""

from __future__ import annotations

import contextlib
import logging
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

log = logging.getLogger(__name__)

# Iceberg's refusal of a copy-on-write DELETE/UPDATE/MERGE whose table another writer
# committed to while Spark planned the statement (docs/runtime.md, "Concurrent writers").
CONCURRENT_SCAN = "the table has been concurrently modified"
CONCURRENT_ATTEMPTS = 5

T = TypeVar("T")


def retry_concurrent_scan(
    run: Callable[[], T], what: str, attempts: int = CONCURRENT_ATTEMPTS, wait: float = 0.2
) -> T:
    """``run()``, run again when Iceberg refused its scan as concurrently modified.

    With catalog caching off, Spark refreshes the table between planning the statement's
    scan and its runtime file filter; a commit by another thread in between makes Iceberg
    refuse the statement before it writes anything, so running it again is safe and reads
    the newer snapshot. Any other error, and the last refusal, are raised.
    """
    for attempt in range(1, attempts):
        try:
            return run()
        except Exception as exc:
            if CONCURRENT_SCAN not in str(exc):
                raise
            log.info("%s: table changed while planned (attempt %d), running again", what, attempt)
            time.sleep(wait * attempt)
    return run()  # the last attempt: whatever it raises is raised


def sql_retrying(spark: SparkSession, text: str, args: dict | None = None) -> DataFrame:
    """``spark.sql(text, args)`` for a row-level statement, with :func:`retry_concurrent_scan`."""
    return retry_concurrent_scan(lambda: spark.sql(text, args=args), what=text.split("\n")[0][:80])


# Spark SQL settings that one statement asks for with a `/* floe:<name> */` comment
# (docs/runtime.md, "Statement settings"). The session's settings are shared by every
# dbt thread, so they are set for the statement's run only and counted: the first of
# overlapping statements sets a value, the last one puts the previous value back.
STATEMENT_SETTINGS: dict[str, dict[str, str]] = {
    # A MERGE of a batch into a larger table: Spark's runtime filter (a Bloom filter of
    # the batch's keys, built by a subquery over the batch) drops the table's rows
    # whose key is not in the batch before they are shuffled for the join. Spark adds
    # it only to a join it expects to shuffle (no side under the broadcast threshold:
    # a MERGE's batch is the preserved side of an outer join, which is never
    # broadcast anyway), over a table scan of at least the application threshold
    # (10 GB by default, sized for clusters; below 32 MB the shuffle costs less than
    # the filter's subquery), from a batch below the creation threshold, here
    # unbounded: a frozen or staged batch has no size estimate Spark trusts, and the
    # filter's bits are capped anyway (docs/decisions/0020-runtime-filtered-merges.md).
    "runtime_filter": {
        "spark.sql.optimizer.runtime.bloomFilter.enabled": "true",
        "spark.sql.optimizer.runtime.bloomFilter.applicationSideScanSizeThreshold": "32MB",
        "spark.sql.optimizer.runtime.bloomFilter.creationSideThreshold": "1PB",
        "spark.sql.autoBroadcastJoinThreshold": "-1",
    },
    # A plan whose shuffles its windows fix (the scd2 versions): adaptive execution
    # can change nothing in it but submits each shuffle stage as a job of its own and
    # plans again after it (0.85 -> 0.64 s for the bench's versions; docs/scd2.md).
    "static_plan": {"spark.sql.adaptive.enabled": "false"},
    # A join of two Iceberg tables partitioned alike (bucket(N, key)) reads bucket
    # against bucket with no shuffle. Scoped to the statements that join a bucketed
    # CDC batch with its table: `preserve-data-grouping` groups an Iceberg scan's
    # files by partition, which costs parallelism elsewhere (docs/cdc.md).
    "storage_partitioned_join": {
        "spark.sql.sources.v2.bucketing.enabled": "true",
        "spark.sql.sources.v2.bucketing.pushPartValues.enabled": "true",
        "spark.sql.sources.v2.bucketing.partiallyClusteredDistribution.enabled": "true",
        "spark.sql.requireAllClusterKeysForCoPartition": "false",
        "spark.sql.iceberg.planning.preserve-data-grouping": "true",
    },
}
_STATEMENT_MARK = re.compile(r"/\*\s*floe:\s*([a-z_]+)\s*\*/")
# key -> [value set, holders, value before]
_HELD: dict[str, list] = {}
_HELD_LOCK = threading.Lock()


def statement_marks(sql: str) -> list[str]:
    """The statement settings `sql` asks for (its `/* floe:<name> */` comments).

    ValueError names an unknown one: a typo would otherwise cost only speed, silently.
    """
    names = _STATEMENT_MARK.findall(sql)
    unknown = [n for n in names if n not in STATEMENT_SETTINGS]
    if unknown:
        raise ValueError(
            f"unknown floe statement setting(s) {', '.join(unknown)}; "
            f"known: {', '.join(sorted(STATEMENT_SETTINGS))}"
        )
    return names


@contextlib.contextmanager
def statement_settings(spark: SparkSession, names: Sequence[str]) -> Iterator[None]:
    """Spark settings `STATEMENT_SETTINGS[name]` for the duration of the block.

    Other threads' statements planned meanwhile see them too; the settings here only
    steer plans (never results), so the cost of that is at most a slower plan. A key
    another holder set to a different value is left as it is.
    """
    wanted: dict[str, str] = {}
    for name in names:
        wanted.update(STATEMENT_SETTINGS[name])
    taken: list[str] = []
    with _HELD_LOCK:
        for key, value in wanted.items():
            held = _HELD.get(key)
            if held is None:
                _HELD[key] = [value, 1, spark.conf.get(key, None)]
                spark.conf.set(key, value)
                taken.append(key)
            elif held[0] == value:
                held[1] += 1
                taken.append(key)
    try:
        yield
    finally:
        with _HELD_LOCK:
            for key in taken:
                held = _HELD[key]
                held[1] -= 1
                if held[1] == 0:
                    del _HELD[key]
                    if held[2] is None:
                        spark.conf.unset(key)
                    else:
                        spark.conf.set(key, held[2])
