"""Data-quality engine: 20 checks over 8 columns in one pass vs a full scan vs 20 queries.

Targets (issue 17): floe's check run takes at most 1.5x one plain scan of the 8 checked
columns, and is at least 5x faster than the same 20 checks run as 20 separate queries.

Baselines, all on the same Iceberg table (written once into a temporary lakehouse):
- `count(*)`: Iceberg answers a bare count(*) from metadata, so aggregate push-down is
  switched off to force a scan; that scan still decodes no column;
- `full scan`: sum of a hash of the 8 checked columns, i.e. a scan that reads and decodes
  every column the checks read (the fairer "one pass over the data"; a count of the hash
  would be simplified by Spark to count(*), hash being never NULL);
- `20 queries`: each check's metric computed by its own aggregation;
- `one read`: `compute_metrics(..., one_read=True)`, the sketches observed (`df.observe`)
  on the rows the codegen-able aggregation reads, vs the default two aggregations (the
  sketches' own aggregation reads their two columns again).

Spark jobs per run are counted with the status tracker (a job group per measured action).

Scale: FLOE_BENCH_DQ_ROWS (default 10,000,000); FLOE_BENCH_DQ_REPEAT (default 2, best of).
"""

from __future__ import annotations

import itertools
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROWS = int(os.environ.get("FLOE_BENCH_DQ_ROWS", "10000000"))
REPEAT = int(os.environ.get("FLOE_BENCH_DQ_REPEAT", "2"))
TABLE = "dq.bench_dq_orders"
COLUMNS = ("id", "customer_id", "amount", "quantity", "country", "status", "email", "code")

CHECKS = [
    "size > 0",
    "is_complete(id)",
    "completeness(email) >= 0.95",
    "is_complete(country)",
    "is_contained_in(country, ['US', 'DE', 'FR', 'NL', 'PL'])",
    "is_contained_in(status, ['new', 'paid', 'shipped'])",
    "is_non_negative(amount)",
    "maximum(amount) <= 1000",
    "0 <= mean(amount) <= 1000",
    "standard_deviation(amount) < 1000",
    "sum(quantity) > 0",
    "minimum(quantity) >= 0",
    "maximum(quantity) < 50",
    r"has_pattern(email, '^u[0-9]+@x[.]io$')",
    "max_length(email) <= 64",
    "approx_count_distinct(customer_id) >= 90000",
    "0 <= approx_quantile(amount, 0.5) <= 1000",
    "has_data_type(code, integral)",
    "compliance('quantity * amount >= 0') == 1",
    {"check": "completeness(status) >= 0.99", "where": "country = 'US'"},
]


def _best(fn: Callable[[], object]) -> float:
    times = []
    for _ in range(REPEAT):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return min(times)


_GROUPS = itertools.count()


def _jobs(spark, fn: Callable[[], object]) -> int:
    """Spark jobs `fn` runs (the status tracker is fed by the asynchronous listener bus)."""
    group = f"bench-dq-{next(_GROUPS)}"
    spark.sparkContext.setJobGroup(group, "bench_dq")
    try:
        fn()
    finally:
        spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)
    spark.sparkContext._jsc.sc().listenerBus().waitUntilEmpty()
    return len(spark.sparkContext.statusTracker().getJobIdsForGroup(group))


def _write_table(spark) -> None:
    from pyspark.sql import functions as F

    df = spark.range(ROWS).select(
        F.col("id"),
        (F.col("id") % 100_000).alias("customer_id"),
        (F.rand(7) * 1000).alias("amount"),
        (F.col("id") % 50).cast("int").alias("quantity"),
        F.element_at(
            F.array(*map(F.lit, ["US", "DE", "FR", "NL", "PL"])), (F.col("id") % 5 + 1).cast("int")
        ).alias("country"),
        F.element_at(
            F.array(*map(F.lit, ["new", "paid", "shipped"])), (F.col("id") % 3 + 1).cast("int")
        ).alias("status"),
        F.when(F.col("id") % 100 == 0, F.lit(None))
        .otherwise(F.concat(F.lit("u"), F.col("id").cast("string"), F.lit("@x.io")))
        .alias("email"),
        (F.col("id") % 1000).cast("string").alias("code"),
    )
    df.writeTo(TABLE).using("iceberg").createOrReplace()


def main() -> None:
    from pyspark.sql import functions as F

    from floe.quality.analyzers import compute_metrics
    from floe.quality.checks import parse_checks
    from floe.quality.verification import verify
    from floe.runtime import Settings, get_spark, use_settings

    home = Path(tempfile.mkdtemp(prefix="floe_bench_dq_"))
    spark = get_spark()
    use_settings(spark, Settings.from_env({"FLOE_HOME": str(home)}))
    started = time.perf_counter()
    _write_table(spark)
    print(
        f"rows {ROWS:,}; table written in {time.perf_counter() - started:.1f}s; "
        f"{len(CHECKS)} checks over {len(COLUMNS)} columns; best of {REPEAT}"
    )

    table = spark.table(TABLE)
    checks = parse_checks(CHECKS)
    assert len({c for c in checks for c in c.analyzer.columns}) == len(COLUMNS)

    # Warm up (JIT, Iceberg metadata caches) so the first timing is not the slowest.
    compute_metrics(table, [c.analyzer for c in checks])
    spark.conf.set("spark.sql.iceberg.aggregate-push-down.enabled", "false")
    count_scan = _best(lambda: spark.table(TABLE).agg(F.count(F.lit(1))).collect())
    full_scan = _best(
        lambda: spark.table(TABLE).agg(F.sum(F.hash(*[F.col(c) for c in COLUMNS]))).collect()
    )
    spark.conf.unset("spark.sql.iceberg.aggregate-push-down.enabled")
    one_pass = _best(lambda: compute_metrics(table, [c.analyzer for c in checks]))
    verified = _best(lambda: verify(spark, TABLE, CHECKS, model="bench_dq_orders"))
    failed = [r.message for r in verify(spark, TABLE, CHECKS, store=False).results if r.failed]
    separate = _best(lambda: [compute_metrics(table, [c.analyzer]) for c in checks])
    one_read = _best(lambda: compute_metrics(table, [c.analyzer for c in checks], one_read=True))
    jobs_one_pass = _jobs(spark, lambda: compute_metrics(table, [c.analyzer for c in checks]))
    jobs_one_read = _jobs(
        spark, lambda: compute_metrics(table, [c.analyzer for c in checks], one_read=True)
    )
    jobs_verify = _jobs(spark, lambda: verify(spark, TABLE, CHECKS, model="bench_dq_orders"))
    with_unique = _best(
        lambda: compute_metrics(
            table, [c.analyzer for c in parse_checks([*CHECKS, "is_unique(id)"])]
        )
    )

    print(f"count(*) scan (push-down off)   {count_scan:8.2f}s")
    print(f"full scan of the 8 columns      {full_scan:8.2f}s")
    print(
        f"floe one pass, 20 checks        {one_pass:8.2f}s  "
        f"(scan agg + sketch agg; {jobs_one_pass} Spark jobs)"
    )
    print(
        f"floe one_read=True              {one_read:8.2f}s  "
        f"(scan agg + observed sketches; {jobs_one_read} Spark jobs)"
    )
    print(
        f"floe verify (unchanged data)    {verified:8.2f}s  "
        f"(+ snapshot id, latest run's metrics; {jobs_verify} Spark jobs)"
    )
    print(f"20 separate queries             {separate:8.2f}s")
    print(f"one pass + is_unique(id)        {with_unique:8.2f}s  (adds one groupBy)")
    print(f"ratio one pass / count(*) scan      {one_pass / count_scan:6.2f}x")
    print(f"ratio one pass / full 8-column scan {one_pass / full_scan:6.2f}x  (target <= 1.5x)")
    print(f"ratio verify / full 8-column scan   {verified / full_scan:6.2f}x")
    print(f"ratio 20 queries / one pass         {separate / one_pass:6.2f}x  (target >= 5x)")
    if failed:
        print("unexpected failed checks:", *failed, sep="\n  ")
