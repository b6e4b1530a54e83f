"""SCD2 load times: floe's scd2 materialization vs a stock dbt snapshot vs one hand MERGE.

Side by side in one SparkSession on the same source (issue: SCD2 dimensions):
N customers (FLOE_BENCH_SCD2_ROWS, default 1,000,000), then one load with 1 % of the
customers changed and 0.1 % deleted.

- floe (changes): `scd2` over a change feed (touched keys only, deletes flagged);
- floe (full): `scd2` over the full state (deletes by absence), the snapshot's input;
- stock snapshot: dbt's `check` strategy on the same six columns, hard_deletes invalidate;
- hand MERGE: the lower bound, one MERGE applying precomputed expiries and inserts.

FLOE_BENCH_SCD2_GROWTH=1 repeats at 5 x N to show how time grows.
Targets: floe incremental <= 1/3 of the snapshot, <= 1.5 x the hand MERGE.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parent / "scd2_project"
NODES = {
    "model.floe_bench_scd2.dim_floe": "floe (changes)",
    "model.floe_bench_scd2.dim_floe_full": "floe (full)",
    "snapshot.floe_bench_scd2.dim_snapshot": "stock snapshot",
}
ATTRS = "first_name, last_name, employer_name, email_id, city, country"


def _state(spark, n: int, day: str, changed: bool):
    base = spark.range(1, n + 1).selectExpr(
        "id as customer_id",
        "concat('F', id % 997) as first_name",
        "concat('L', id % 991) as last_name",
        "concat('E', id % 83) as employer_name",
        "concat(id, '@example.org') as email_id",
        "concat('C', id % 101) as city",
        "concat('K', id % 17) as country",
        f"date'{day}' as load_date",
    )
    if not changed:
        return base
    return base.where("id % 1000 <> 500").selectExpr(
        "customer_id",
        "first_name",
        "case when customer_id % 100 = 1 then concat('L2_', customer_id) else last_name end"
        " as last_name",
        "employer_name",
        "email_id",
        "city",
        "country",
        "load_date",
    )


def _write_sources(spark, n: int) -> None:
    spark.sql("create namespace if not exists bench")
    s1 = _state(spark, n, "2022-07-01", changed=False)
    s1.writeTo("bench.src_state").using("iceberg").partitionedBy("load_date").createOrReplace()
    s1.selectExpr("*", "false as _scd2_deleted").writeTo("bench.src_changes").using(
        "iceberg"
    ).partitionedBy("load_date").createOrReplace()


def _append_second_load(spark, n: int) -> None:
    s2 = _state(spark, n, "2022-07-02", changed=True)
    s2.writeTo("bench.src_state").append()
    feed = s2.where("customer_id % 100 = 1").selectExpr("*", "false as _scd2_deleted")
    deleted = (
        _state(spark, n, "2022-07-02", changed=False)
        .where("customer_id % 1000 = 500")
        .selectExpr("*", "true as _scd2_deleted")
    )
    feed.unionByName(deleted).writeTo("bench.src_changes").append()


def _dbt(args: list[str], day: str) -> dict[str, float]:
    from floe.dbt import run_dbt

    run = run_dbt(
        args, vars={"bench_load_date": day}, project=PROJECT, target_path=PROJECT / "target"
    )
    if not run.success:
        raise RuntimeError(f"dbt {' '.join(args)} failed: {run.failures or run.exception}")
    return {
        NODES[r.node.unique_id]: r.execution_time
        for r in run.result.results
        if r.node.unique_id in NODES
    }


def _hand_merge(spark) -> float:
    """The lower bound: changes precomputed (untimed), then one MERGE (timed)."""
    spark.sql(
        "create or replace table bench.dim_hand using iceberg tblproperties ("
        "'format-version'='2', 'write.merge.mode'='merge-on-read',"
        "'write.update.mode'='merge-on-read', 'write.delete.mode'='merge-on-read')"
        " as select * from bench.dim_floe_initial"
    )
    spark.sql(
        f"""
        create or replace table bench.hand_staged using iceberg as
        with ch as (select * from bench.src_changes where load_date = date'2022-07-02'),
        mx as (select max(customer_sk) as m from bench.dim_hand)
        select 'match' as kind, customer_id, {ATTRS}, _scd2_deleted, cast(null as bigint) as sk
        from ch
        union all
        select 'insert', customer_id, {ATTRS}, _scd2_deleted,
            mx.m + row_number() over (order by customer_id)
        from ch cross join mx where not _scd2_deleted
        """
    )
    started = time.perf_counter()
    spark.sql(
        f"""
        merge into bench.dim_hand as t using bench.hand_staged as s
        on s.kind = 'match' and t.customer_id = s.customer_id
            and t.rec_exp_dt = date'9999-12-31'
        when matched then update set t.rec_exp_dt = date'2022-07-01'
        when not matched and s.kind = 'insert' then insert
            (customer_sk, customer_id, {ATTRS}, rec_eff_dt, rec_exp_dt)
            values (s.sk, s.customer_id, {", ".join("s." + a for a in ATTRS.split(", "))},
                    date'2022-07-02', date'9999-12-31')
        """
    ).collect()
    return time.perf_counter() - started


def run_once(n: int) -> dict[str, float]:
    from floe.runtime import Settings, get_spark, use_settings

    home = tempfile.mkdtemp(prefix="floe-bench-scd2-")
    settings = Settings.from_env({"FLOE_HOME": home})
    spark = get_spark(settings)
    use_settings(spark, settings)
    _write_sources(spark, n)
    select = ["--select", "bench_loads", "dim_floe", "dim_floe_full", "dim_snapshot"]
    initial = _dbt(["build", *select], "2022-07-01")
    spark.sql("create table bench.dim_floe_initial using iceberg as select * from default.dim_floe")
    _append_second_load(spark, n)
    incremental = _dbt(["build", *select], "2022-07-02")
    hand = _hand_merge(spark)
    floe_rows = spark.table("default.dim_floe").count()
    hand_rows = spark.table("bench.dim_hand").count()
    assert floe_rows == hand_rows, f"floe {floe_rows} rows, hand MERGE {hand_rows}"
    out = {f"initial {k}": v for k, v in initial.items()}
    out.update({f"incremental {k}": v for k, v in incremental.items()})
    out["incremental hand MERGE"] = hand
    return out


def main() -> None:
    n = int(os.environ.get("FLOE_BENCH_SCD2_ROWS", "1000000"))
    sizes = [n, 5 * n] if os.environ.get("FLOE_BENCH_SCD2_GROWTH") == "1" else [n]
    results = {}
    for size in sizes:
        print(f"-- {size:,} customers, 1 % changed, 0.1 % deleted", flush=True)
        t = run_once(size)
        results[size] = t
        for name, seconds in t.items():
            print(f"  {name:<34} {seconds:7.1f} s")
        floe = t["incremental floe (changes)"]
        snap = t["incremental stock snapshot"]
        print(f"  ratio floe/snapshot (incremental)       {floe / snap:5.2f}  (target <= 0.33)")
        print(
            f"  ratio floe(full)/snapshot (incremental) {t['incremental floe (full)'] / snap:5.2f}"
        )
        print(
            f"  ratio floe/hand MERGE (incremental)     "
            f"{floe / t['incremental hand MERGE']:5.2f}  (target <= 1.5)"
        )
        print(
            f"  ratio floe/snapshot (initial load)      "
            f"{t['initial floe (changes)'] / t['initial stock snapshot']:5.2f}"
        )
    if len(sizes) == 2:
        a, b = (results[s]["incremental floe (changes)"] for s in sizes)
        print(f"  growth 1x -> 5x rows: floe incremental x{b / a:.2f}")
