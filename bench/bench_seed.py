"""A 100,000-row seed through floe's seed materialization vs the same rows through a DataFrame.

Both sides start from the CSV file and end with one Iceberg table of the same rows and
types, in one scratch lakehouse and one SparkSession, run alternately:
    seed       `dbt seed --full-refresh -s bench_rows` in-process (the whole invocation:
               dbt's parse, CSV type inference, the DataFrame write, persist_docs)
    dataframe  pandas.read_csv -> spark.createDataFrame -> writeTo().createOrReplace()
Scale by environment:
    FLOE_BENCH_SEED_ROWS     rows of the seed (default 100_000)
    FLOE_BENCH_SEED_REPEATS  rounds (default 5; the first warms the JVM and dbt; which
                             side goes first alternates per round)
Also printed: the seed node alone (dbt's own start-up excluded) over the DataFrame, the
split of the seed's time (dbt's invocation, floe's CSV read and type inference, the Spark
write) and, for reference, dbt-core's agate load of the same CSV (dbt-spark's first step).
Printed ratio (target of docs/decisions/0025-seeds-and-snapshots.md): seed /
dataframe <= 2, medians of the rounds after the first, with the load average.
"""

from __future__ import annotations

import csv
import datetime as dt
import os
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "materializations" / "fixtures" / "seed_project"


def _write_csv(path: Path, rows: int) -> None:
    rng = random.Random(26)
    start = dt.date(2022, 1, 1)
    with path.open("w", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(["id", "name", "amount", "day", "flag"])
        for i in range(rows):
            out.writerow(
                [
                    i,
                    f"name_{rng.randrange(1_000_000)}",
                    f"{rng.random() * 1000:.2f}",
                    (start + dt.timedelta(days=i % 365)).isoformat(),
                    "true" if i % 2 else "false",
                ]
            )


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> None:
    rows = int(os.environ.get("FLOE_BENCH_SEED_ROWS", "100000"))
    repeats = max(2, int(os.environ.get("FLOE_BENCH_SEED_REPEATS", "5")))
    home = Path(tempfile.mkdtemp(prefix="floe_bench_seed_"))
    os.environ["FLOE_HOME"] = str(home)
    for var in ("FLOE_LANDING", "FLOE_WAREHOUSE", "FLOE_CATALOG_URI"):
        os.environ.pop(var, None)
    import pandas as pd

    from floe.dbt_runner import run_dbt
    from floe.runtime import Settings, get_spark, use_settings

    settings = Settings.from_env()
    spark = get_spark(settings)
    use_settings(spark, settings)
    project = home / "seed_project"
    shutil.copytree(FIXTURE, project)
    csv_path = project / "seeds" / "bench_rows.csv"
    _write_csv(csv_path, rows)
    print(f"{rows:,} rows x 5 columns, {csv_path.stat().st_size / 1e6:.1f} MB CSV")

    node_seconds: list[float] = []

    def seed() -> float:
        started = time.perf_counter()
        run = run_dbt(
            ["seed", "--full-refresh", "-s", "bench_rows", "--threads", "1"],
            project=project,
            profiles_dir=ROOT / "profiles",
            target_path=home / "target",
            quiet=True,
        )
        if not run.success:
            raise RuntimeError(f"dbt seed failed: {run.failures or run.exception}")
        node_seconds.append(sum(r.execution_time for r in run.result.results))
        return time.perf_counter() - started

    def dataframe() -> float:
        started = time.perf_counter()
        frame = pd.read_csv(csv_path, parse_dates=["day"])
        frame["day"] = frame["day"].dt.date
        (
            spark.createDataFrame(frame)
            .writeTo("staging.bench_rows_df")
            .using("iceberg")
            .tableProperty("format-version", "2")
            .createOrReplace()
        )
        return time.perf_counter() - started

    def read_only() -> tuple[float, float]:
        """floe's CSV read and type inference alone; dbt-core's agate load of the same CSV."""
        from dbt.adapters.spark import SparkAdapter
        from dbt_common.clients import agate_helper

        from floe.materialize.seeds import read_seed

        started = time.perf_counter()
        read_seed(csv_path, delimiter=",", column_types={}, convert_type=SparkAdapter.convert_type)
        floe_read = time.perf_counter() - started
        started = time.perf_counter()
        agate_helper.from_csv(str(csv_path), [], delimiter=",")
        return floe_read, time.perf_counter() - started

    timings: dict[str, list[float]] = {"seed": [], "dataframe": []}
    steps = [("seed", seed), ("dataframe", dataframe)]
    for round_ in range(repeats):
        # alternate which side goes first: the first write of a round warms the JVM's
        # Iceberg write path for the second
        for name, step in steps if round_ % 2 == 0 else steps[::-1]:
            seconds = step()
            timings[name].append(seconds)
            print(f"round {round_ + 1} {name:9s} {seconds:6.2f}s  (load {_load()})", flush=True)
    counted = {k: statistics.median(v[1:]) for k, v in timings.items()}
    reads = [read_only() for _ in range(2)]
    floe_read = min(r[0] for r in reads)
    agate_read = min(r[1] for r in reads)
    same = spark.sql(
        "select count(*) from (select id, name, cast(amount as double), day, flag "
        "from staging.bench_rows except all select id, name, amount, day, flag "
        "from staging.bench_rows_df)"
    ).first()[0]
    print(f"rows differing between the two tables: {same}")
    node = statistics.median(node_seconds[1:])
    print(
        f"seed node alone (dbt's parse and relation cache excluded) {node:.2f}s / dataframe "
        f"{counted['dataframe']:.2f}s = {node / counted['dataframe']:.2f}x"
    )
    print(
        f"split of the seed: dbt's invocation (parse, relation cache, artifacts) "
        f"{counted['seed'] - node:.2f}s; the node {node:.2f}s, of which floe's CSV read and "
        f"type inference {floe_read:.2f}s and the Spark write the rest "
        f"{node - floe_read:.2f}s"
    )
    print(
        f"for reference, not on floe's path: dbt-core's agate load of this CSV "
        f"(dbt-spark's seed starts with it) {agate_read:.2f}s"
    )
    print(
        f"seed {counted['seed']:.2f}s / dataframe {counted['dataframe']:.2f}s = "
        f"{counted['seed'] / counted['dataframe']:.2f}x (target <= 2)  load {_load()}"
    )
    shutil.rmtree(home, ignore_errors=True)
