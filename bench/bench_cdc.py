"""CDC merge vs rebuild, copy-on-write vs merge-on-read, and maintenance after many loads.

Runs the real `cdc` strategy (tests/materializations/fixtures/cdc_project, model cdc_matrix)
in-process on a scratch lakehouse. Scale by environment:
    FLOE_BENCH_CDC_ROWS   target table rows        (default 200_000; issue target 10_000_000)
    FLOE_BENCH_CDC_LOADS  loads before maintenance (default 20; 0 skips the maintenance part)
    FLOE_BENCH_CDC_MODES  write modes compared (default "copy-on-write,merge-on-read"); a
                          "-v3" suffix makes the table format v3 (merge-on-read then writes
                          deletion vectors, Puffin, instead of position-delete files)
    FLOE_BENCH_CDC_LAYOUT where a load's changed keys fall: "scattered" over every key
                          (default, like real CDC) or "clustered" in one key range
    FLOE_BENCH_CDC_SORT   "1": the table is sorted by its key (sort_by: id)
    FLOE_BENCH_CDC_BUCKETS N > 0: the table is partitioned by bucket(N, id) (cdc.buckets)
    FLOE_BENCH_CDC_SPLIT  cdc.split settings compared (default "0,1": one MERGE, then split)
    FLOE_BENCH_CDC_REPEATS merge rounds (default 2: the first warms the JVM; best counts)
Each load is 1 % of the rows: 60 % updates, 20 % inserts, 20 % deletes.
Under each mode: its slowest statements, each timed to the next one's start (a query's
Spark job runs when dbt fetches its rows; docs/decisions/0054-cdc-merge-near-a-quarter-of-a-rebuild.md).
Printed ratios (targets in docs/decisions/0016-cdc-merge-pruning.md):
    merge / rebuild from all landed rows          <= 0.25
    data files after N loads + maintain / compacted  <= 2
    full scan after maintain / compacted scan     <= 1.2
"""

from __future__ import annotations

import os
import re
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "materializations" / "fixtures" / "cdc_project"
TABLE = "marts.cdc_matrix"
LAYOUT_VARS: dict[str, object] = {
    "sort_by": "id" if os.environ.get("FLOE_BENCH_CDC_SORT") == "1" else "",
    "cdc_buckets": int(os.environ.get("FLOE_BENCH_CDC_BUCKETS", "0")),
    **(
        {"cdc_split": os.environ["FLOE_BENCH_CDC_SPLIT"]}
        if "FLOE_BENCH_CDC_SPLIT" in os.environ
        else {}
    ),
}


def _dbt(args: list[str], target: Path, **vars: object) -> tuple[float, float]:
    """Seconds of the whole `dbt` invocation and of the model's node alone."""
    from floe.dbt_runner import run_dbt

    started = time.perf_counter()
    # One thread: timings per build, nodes not overlapping (the profile runs 4).
    run = run_dbt(
        [*args, "--threads", "1", "--log-path", str(target / "logs")],
        vars={**LAYOUT_VARS, **vars},
        project=FIXTURE,
        target_path=target,
        quiet=True,
    )
    if not run.success:
        raise RuntimeError(f"dbt {' '.join(args)} failed: {run.failures or run.exception}")
    node = sum(r.execution_time for r in run.result.results)
    return time.perf_counter() - started, node


def _statements(target: Path, since: int) -> tuple[int, list[tuple[float, str]]]:
    """The slowest SQL statements dbt logged after byte `since` of its debug log, each
    timed from its start to the next statement's start (or its node's end).

    dbt-spark's session cursor runs a query's Spark job when dbt fetches its rows, after
    it logged "SQL status" (docs/decisions/0054-cdc-merge-near-a-quarter-of-a-rebuild.md):
    the status alone misses that job and the macro work after it. The split sums to the
    node's time less its set-up before the first statement."""
    log = target / "logs" / "dbt.log"
    text = log.read_text(errors="replace")[since:] if log.exists() else ""
    spans: list[tuple[float, str]] = []
    name, pending, started = "?", False, None

    def stamp(line: str) -> float | None:
        m = re.search(r"(\d\d):(\d\d):(\d\d\.\d+)", line)
        return int(m.group(1)) * 3600 + int(m.group(2)) * 60 + float(m.group(3)) if m else None

    for line in text.splitlines():
        finished = "Finished running node" in line
        if re.search(r"\] \[[^]]*\]: On model\.[^:]*: (/\*|$)", line) or finished:
            now = stamp(line)
            if started is not None and now is not None:
                spans.append((now - started, name))
            started = None if finished else now
            name, pending = "?", not finished
        elif pending and line.strip():
            name, pending = " ".join(line.split())[:70], False
    return since + len(text), sorted(spans, reverse=True)[:8]


def _mode_vars(mode: str) -> dict[str, object]:
    """dbt vars of a compared mode: `merge-on-read-v3` is merge-on-read on format v3."""
    if mode.endswith("-v3"):
        return {"write_mode": mode.removesuffix("-v3"), "format_version": 3}
    return {"write_mode": mode}


def _uptime() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def _scan(spark, table: str) -> float:
    started = time.perf_counter()
    spark.sql(f"select count(*), sum(hash(id, name)) from {table}").collect()
    return time.perf_counter() - started


def _files(spark, table: str) -> int:
    return spark.sql(f"select count(*) from {table}.files").first()[0]


def _load(spark, batch: int, rows: int, next_id: int, clustered: bool = False) -> int:
    """Append batch `batch` of 1 % changes to raw.src_matrix; returns the next new id."""
    from pyspark.sql import functions as F

    n = max(10, rows // 100)
    updates, deletes = n * 6 // 10, n * 2 // 10
    inserts = n - updates - deletes
    # scattered keys, like real CDC: copy-on-write rewrites every file a load touches
    stride = 1 if clustered else max(1, rows // (updates + deletes))
    i = F.col("id")
    first = (batch * (updates + deletes)) % rows if clustered else batch
    key = F.when(i < updates + deletes, (i * stride + first) % rows).otherwise(
        i - updates - deletes + next_id
    )
    op = F.when(i < updates, "U").when(i < updates + deletes, "D").otherwise("I")
    (
        spark.range(0, n)
        .select(
            op.alias("Op"),
            key.cast("int").alias("id"),
            F.concat(F.lit(f"b{batch}-"), key.cast("string")).alias("name"),
            (
                F.lit("2022-07-02 00:00:00").cast("timestamp") + F.make_interval(mins=F.lit(batch))
            ).alias("last_update_time"),
            F.lit(f"cdc/{batch:08d}.parquet").alias("_source_file"),
            i.alias("_row_in_file"),
            F.lit(batch).alias("_batch"),
        )
        .writeTo("raw.src_matrix")
        .append()
    )
    return next_id + inserts


def main() -> None:
    rows = int(os.environ.get("FLOE_BENCH_CDC_ROWS", "200000"))
    loads = int(os.environ.get("FLOE_BENCH_CDC_LOADS", "20"))
    modes = os.environ.get("FLOE_BENCH_CDC_MODES", "copy-on-write,merge-on-read").split(",")
    splits = [s == "1" for s in os.environ.get("FLOE_BENCH_CDC_SPLIT", "0,1").split(",")]
    clustered = os.environ.get("FLOE_BENCH_CDC_LAYOUT", "scattered") == "clustered"
    repeats = int(os.environ.get("FLOE_BENCH_CDC_REPEATS", "2"))
    home = Path(tempfile.mkdtemp(prefix="floe_bench_cdc_"))
    os.environ["FLOE_HOME"] = str(home)
    for var in ("FLOE_LANDING", "FLOE_WAREHOUSE", "FLOE_CATALOG_URI"):
        os.environ.pop(var, None)
    from pyspark.sql import functions as F

    from floe.maintenance import maintain_table
    from floe.runtime import Settings, get_spark, use_settings

    spark = get_spark(Settings.from_env())
    use_settings(spark, Settings.from_env())
    target = home / "dbt_target"
    print(
        f"rows={rows:,} loads={loads} (1 % changes each, "
        f"{'clustered' if clustered else 'scattered'}) {LAYOUT_VARS}  load {_uptime()}"
    )
    spark.range(0, rows).select(
        F.lit(None).cast("string").alias("Op"),
        F.col("id").cast("int"),
        F.concat(F.lit("n-"), "id").alias("name"),
        F.lit("2022-07-01 00:00:00").cast("timestamp").alias("last_update_time"),
        F.lit("LOAD00000001.parquet").alias("_source_file"),
        F.col("id").alias("_row_in_file"),
        F.lit(0).alias("_batch"),
    ).writeTo("raw.src_matrix").using("iceberg").create()
    next_id = rows
    for batch in range(1, max(1, loads) + 1):  # every load lands once, before any build
        next_id = _load(spark, batch, rows, next_id, clustered)

    results = {}
    logged = 0
    # The first round warms the JVM (JIT, code generation); the best of the rest counts.
    for _ in range(repeats):
        for mode in modes:
            for split in splits:
                _dbt(
                    ["run", "-s", "cdc_matrix", "--full-refresh"],
                    target,
                    batch=0,
                    **_mode_vars(mode),
                )
                base_scan = _scan(spark, TABLE)
                files = _files(spark, TABLE)
                logged, _ = _statements(target, logged)
                merge = _dbt(
                    ["run", "-s", "cdc_matrix"],
                    target,
                    batch=1,
                    cdc_split=split,
                    **_mode_vars(mode),
                )
                logged, slowest = _statements(target, logged)
                scan = _scan(spark, TABLE)
                name = f"{mode}{' split' if split else ''}"
                if name not in results or merge[0] < results[name][0][0]:
                    results[name] = (merge, scan, base_scan, files, slowest)
    rebuild = min(
        _dbt(["run", "-s", "cdc_matrix", "--full-refresh"], target, batch="all")
        for _ in range(max(1, repeats - 1))
    )
    for mode, (merge, scan, base_scan, files, slowest) in results.items():
        print(
            f"{mode:20s} merge {merge[0]:6.1f}s (node {merge[1]:5.1f}s)  "
            f"rebuild {rebuild[0]:6.1f}s (node {rebuild[1]:5.1f}s)  "
            f"merge/rebuild {merge[0] / rebuild[0]:.3f}, nodes {merge[1] / rebuild[1]:.3f} "
            f"(target <= 0.25)  scan after merge/before {scan / base_scan:.2f}  "
            f"({files} data files before)"
        )
        for seconds, statement in slowest:
            print(f"    {seconds:6.2f}s  {statement}")
    print(f"load {_uptime()}")
    if loads == 0:
        return

    for mode in modes:
        _dbt(["run", "-s", "cdc_matrix", "--full-refresh"], target, batch=0, **_mode_vars(mode))
        for batch in range(1, loads + 1):
            _dbt(["run", "-s", "cdc_matrix"], target, batch=batch, **_mode_vars(mode))
        files_loaded = _files(spark, TABLE)
        scan_loaded = _scan(spark, TABLE)
        report = maintain_table(spark, TABLE)
        files_maintained = _files(spark, TABLE)
        scan_maintained = min(_scan(spark, TABLE) for _ in range(3))
        spark.sql("drop table if exists marts.cdc_matrix_compacted purge")
        spark.sql(f"create table marts.cdc_matrix_compacted using iceberg as select * from {TABLE}")
        spark.sql(
            "call lake.system.rewrite_data_files(table => 'marts.cdc_matrix_compacted', "
            "options => map('rewrite-all', 'true'))"
        ).collect()
        files_compacted = _files(spark, "marts.cdc_matrix_compacted")
        scan_compacted = min(_scan(spark, "marts.cdc_matrix_compacted") for _ in range(3))
        print(f"{mode}: {report.line()}")
        print(
            f"{mode:14s} after {loads} loads: files {files_loaded} (scan {scan_loaded:.2f}s); "
            f"maintained {files_maintained} vs compacted {files_compacted}: "
            f"ratio {files_maintained / max(1, files_compacted):.2f} (target <= 2); "
            f"scan maintained/compacted {scan_maintained / scan_compacted:.2f} (target <= 1.2)"
        )


if __name__ == "__main__":
    main()
