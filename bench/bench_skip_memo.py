"""A table model's "same inputs, no rebuild" memo: Iceberg table property vs the memo store.

The `table` materialization used to keep its input fingerprint in the table property
`floe.inputs` (check: `show tblproperties t ('floe.inputs')`; record: `alter table t set
tblproperties`, one catalog commit per rebuild). It now keeps it in floe's one memo store
(floe.runtime.settled, kind `tables`: check `is_settled`, record `remember`, with the
table's own uuid and snapshot as a `TableAt` input). Both sides, alternately, in one
scratch lakehouse and one SparkSession:
    property   the check and the record as the old table.sql ran them (SQL statements)
    store      settled.is_settled + settled.remember on the same table
Scale by environment: FLOE_BENCH_SKIP_ROUNDS (default 20; the first is a warm-up).
Printed: median seconds of each step and store / property ratios, with the load average
(docs/decisions/0040-one-skip-memo-store.md).
"""

from __future__ import annotations

import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> None:
    rounds = max(3, int(os.environ.get("FLOE_BENCH_SKIP_ROUNDS", "20")))
    home = Path(tempfile.mkdtemp(prefix="floe_bench_skip_"))
    from floe.runtime import Settings, get_spark, use_settings
    from floe.runtime.settled import TABLES, TableAt, is_settled, remember

    settings = Settings.from_env({"FLOE_HOME": str(home)})
    spark = get_spark(settings)
    use_settings(spark, settings)
    spark.sql("create or replace table marts.bench_skip (k bigint) using iceberg")
    spark.sql("insert into marts.bench_skip values (1), (2), (3)")
    fingerprint = "0123456789abcdef" * 2
    inputs = [TableAt("marts.bench_skip", same_rows_ok=True)]

    def property_check() -> bool:
        rows = spark.sql("show tblproperties marts.bench_skip ('floe.inputs')").collect()
        return bool(rows) and rows[0][1] == fingerprint

    def property_record() -> None:
        spark.sql(
            f"alter table marts.bench_skip set tblproperties ('floe.inputs' = '{fingerprint}')"
        )

    def store_check() -> bool:
        return is_settled(spark, settings, TABLES, "marts.bench_skip", inputs, fingerprint)

    def store_record() -> None:
        remember(spark, settings, TABLES, "marts.bench_skip", inputs, fingerprint)

    steps = {
        "property record": property_record,
        "store record": store_record,
        "property check": property_check,
        "store check": store_check,
    }
    timings: dict[str, list[float]] = {name: [] for name in steps}
    for _ in range(rounds):
        for name, step in steps.items():
            started = time.perf_counter()
            step()
            timings[name].append(time.perf_counter() - started)
    assert property_check() and store_check(), "both memos must answer 'unchanged'"
    medians = {k: statistics.median(v[1:]) for k, v in timings.items()}
    for name, seconds in medians.items():
        print(f"{name:16s} median {seconds * 1000:7.1f} ms over {rounds - 1} rounds")
    for step in ("record", "check"):
        ratio = medians[f"store {step}"] / medians[f"property {step}"]
        print(f"{step}: store / property = {ratio:.2f}x  (load {_load()})")
    shutil.rmtree(home, ignore_errors=True)
