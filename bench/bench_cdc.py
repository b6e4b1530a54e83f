"""CDC merge vs rebuild, copy-on-write vs merge-on-read, and maintenance after many loads.

Runs the real `cdc` strategy (tests/materializations/fixtures/cdc_project, model cdc_matrix)
in-process on a scratch lakehouse. Scale by environment:
    FLOE_BENCH_CDC_ROWS   target table rows        (default 200_000; issue target 10_000_000)
    FLOE_BENCH_CDC_LOADS  loads before maintenance (default 20)
Each load is 1 % of the rows: 60 % updates, 20 % inserts, 20 % deletes.
Printed ratios (targets of issue 4):
    merge / rebuild from all landed rows          <= 0.15
    data files after N loads + maintain / compacted  <= 2
    full scan after maintain / compacted scan     <= 1.2
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "materializations" / "fixtures" / "cdc_project"
TABLE = "marts.cdc_matrix"


def _dbt(args: list[str], target: Path, **vars: object) -> float:
    from floe.dbt import run_dbt

    started = time.perf_counter()
    # One thread: timings per build, nodes not overlapping (the profile runs 4).
    run = run_dbt(
        [*args, "--threads", "1"], vars=vars, project=FIXTURE, target_path=target, quiet=True
    )
    if not run.success:
        raise RuntimeError(f"dbt {' '.join(args)} failed: {run.failures or run.exception}")
    return time.perf_counter() - started


def _scan(spark, table: str) -> float:
    started = time.perf_counter()
    spark.sql(f"select count(*), sum(hash(id, name)) from {table}").collect()
    return time.perf_counter() - started


def _files(spark, table: str) -> int:
    return spark.sql(f"select count(*) from {table}.files").first()[0]


def _load(spark, batch: int, rows: int, next_id: int) -> int:
    """Append batch `batch` of 1 % changes to raw.src_matrix; returns the next new id."""
    from pyspark.sql import functions as F

    n = max(10, rows // 100)
    updates, deletes = n * 6 // 10, n * 2 // 10
    inserts = n - updates - deletes
    # scattered keys, like real CDC: copy-on-write rewrites every file a load touches
    stride = max(1, rows // (updates + deletes))
    i = F.col("id")
    key = F.when(i < updates + deletes, (i * stride + batch) % rows).otherwise(
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
    home = Path(tempfile.mkdtemp(prefix="floe_bench_cdc_"))
    os.environ["FLOE_HOME"] = str(home)
    for var in ("FLOE_LANDING", "FLOE_WAREHOUSE", "FLOE_CATALOG_URI"):
        os.environ.pop(var, None)
    from pyspark.sql import functions as F

    from floe.maintenance import maintain_table
    from floe.runtime import Settings, get_spark, use_settings

    spark = get_spark()
    use_settings(spark, Settings.from_env())
    target = home / "dbt_target"
    print(f"rows={rows:,} loads={loads} (1 % changes each)")
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
    for batch in range(1, loads + 1):  # every load lands once, before any build
        next_id = _load(spark, batch, rows, next_id)

    results = {}
    for mode in ("copy-on-write", "merge-on-read"):
        _dbt(["run", "-s", "cdc_matrix", "--full-refresh"], target, batch=0, write_mode=mode)
        base_scan = _scan(spark, TABLE)
        merge = _dbt(["run", "-s", "cdc_matrix"], target, batch=1, write_mode=mode)
        scan = _scan(spark, TABLE)
        results[mode] = (merge, scan, base_scan)
    rebuild = _dbt(["run", "-s", "cdc_matrix", "--full-refresh"], target, batch="all")
    for mode, (merge, scan, base_scan) in results.items():
        print(
            f"{mode:14s} merge {merge:6.1f}s  rebuild {rebuild:6.1f}s  "
            f"merge/rebuild {merge / rebuild:.3f} (target <= 0.15)  "
            f"scan after merge/before {scan / base_scan:.2f}"
        )

    for mode in ("copy-on-write", "merge-on-read"):
        _dbt(["run", "-s", "cdc_matrix", "--full-refresh"], target, batch=0, write_mode=mode)
        for batch in range(1, loads + 1):
            _dbt(["run", "-s", "cdc_matrix"], target, batch=batch, write_mode=mode)
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
