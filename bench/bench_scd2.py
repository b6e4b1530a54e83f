"""SCD2 load times: floe's scd2 materialization vs a stock dbt snapshot vs one hand MERGE.

Side by side in one SparkSession on the same source (issue: SCD2 dimensions):
N customers (FLOE_BENCH_SCD2_ROWS, default 1,000,000), then one load with 1 % of the
customers changed and 0.1 % deleted.

- floe (changes): `scd2` over a change feed (touched keys only, deletes flagged);
- floe (full): `scd2` over the full state (deletes by absence), the snapshot's input;
- stock snapshot: dbt's `check` strategy on the same six columns, hard_deletes invalidate;
- hand MERGE: the lower bound, one MERGE applying precomputed expiries and inserts.

FLOE_BENCH_SCD2_REPEATS (default 3) runs the case that many times after a warm-up run,
each on a fresh lakehouse in the same JVM, and prints medians; FLOE_BENCH_SCD2_GROWTH=1 repeats at 5 x N
to show how time grows.
Targets: floe incremental <= 1/3 of the snapshot, <= 1.5 x the hand MERGE.

Catch-up (FLOE_BENCH_SCD2_CATCHUP_ROWS customers, default 200,000): from the same
state, one dimension applies one pending change load and an identical one five
(each load 1 % of the customers changed, 0.1 % deleted). Target: five <= 1.3 x one (issue 30; 1.5 before).
A third dimension applies the same five in the multi-load form (one rendering for every
load, docs/scd2.md) and is printed beside them.
FLOE_BENCH_SCD2_CASES picks the cases (default "incremental,catchup").
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from bench.bench_decode import load

PROJECT = Path(__file__).resolve().parent / "scd2_project"
NODES = {
    "model.floe_bench_scd2.dim_floe": "floe (changes)",
    "model.floe_bench_scd2.dim_floe_full": "floe (full)",
    "snapshot.floe_bench_scd2.dim_snapshot": "stock snapshot",
    "model.floe_bench_scd2.dim_catchup_one": "catch-up 1 load",
    "model.floe_bench_scd2.dim_catchup_five": "catch-up 5 loads",
    "model.floe_bench_scd2.dim_catchup_five_multi": "catch-up 5 loads, one rendering",
}
CATCHUP_LOADS = 5
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


def _dbt(args: list[str], day: str, **more_vars: str) -> dict[str, float]:
    from floe.dbt_runner import run_dbt

    # One thread: the nodes compared side by side must not overlap (the profile runs 4).
    run = run_dbt(
        [*args, "--threads", "1"],
        vars={"bench_load_date": day, **more_vars},
        project=PROJECT,
        target_path=PROJECT / "target",
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


def _spark():
    from floe.runtime import Settings, get_spark, use_settings

    home = tempfile.mkdtemp(prefix="floe-bench-scd2-")
    settings = Settings.from_env({"FLOE_HOME": home})
    spark = get_spark(settings)
    use_settings(spark, settings)
    return spark


def _append_catchup_loads(spark, n: int) -> None:
    """Loads 2..6: 1 % of the customers changed and 0.1 % deleted, other keys each load."""
    for k in range(2, 2 + CATCHUP_LOADS):
        day = _state(spark, n, f"2022-07-{k:02d}", changed=False)
        changed = day.where(f"customer_id % 100 = {k}").selectExpr(
            "customer_id",
            "first_name",
            f"concat('L{k}_', customer_id) as last_name",
            "employer_name",
            "email_id",
            "city",
            "country",
            "load_date",
            "false as _scd2_deleted",
        )
        deleted = day.where(f"customer_id % 1000 = {500 + 10 * k}").selectExpr(
            "*", "true as _scd2_deleted"
        )
        changed.unionByName(deleted).writeTo("bench.src_catchup").append()


def run_catchup(n: int, repeats: int) -> list[dict[str, float]]:
    """One pending load vs five from the same state, `repeats` times, in one SparkSession.

    Each repeat rebuilds both dimensions at load 1 (a full refresh with run_date),
    then times the one-load and the five-load build; the first repeat also warms the JVM.
    """
    spark = _spark()
    spark.sql("create namespace if not exists bench")
    first = _state(spark, n, "2022-07-01", changed=False).selectExpr("*", "false as _scd2_deleted")
    first.writeTo("bench.src_catchup").using("iceberg").partitionedBy("load_date").createOrReplace()
    _append_catchup_loads(spark, n)
    select = [
        "--select",
        "bench_catchup_loads",
        "dim_catchup_one",
        "dim_catchup_five",
        "dim_catchup_five_multi",
    ]
    changed_per_load = spark.range(1, n + 1).where("id % 100 = 2").count()
    runs = []
    for _ in range(repeats):
        _dbt(["build", *select, "--full-refresh"], "2022-07-01", run_date="2022-07-01")
        out = _dbt(["build", "--select", "dim_catchup_one"], "2022-07-02", run_date="2022-07-02")
        out.update(_dbt(["build", "--select", "dim_catchup_five"], "2022-07-06"))
        out.update(_dbt(["build", "--select", "dim_catchup_five_multi"], "2022-07-06"))
        one = spark.table("default.dim_catchup_one").count()
        five = spark.table("default.dim_catchup_five").count()
        assert one == n + changed_per_load, f"dim_catchup_one has {one} rows"
        assert five == n + CATCHUP_LOADS * changed_per_load, f"dim_catchup_five has {five} rows"
        same = spark.sql(
            "select * from default.dim_catchup_five "
            "except all select * from default.dim_catchup_five_multi"
        ).count()
        assert same == 0, f"the two forms differ in {same} rows"
        runs.append(out)
    return runs


def run_once(n: int) -> dict[str, float]:
    spark = _spark()
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
    cases = os.environ.get("FLOE_BENCH_SCD2_CASES", "incremental,catchup").split(",")
    if "catchup" in cases:
        n = int(os.environ.get("FLOE_BENCH_SCD2_CATCHUP_ROWS", "200000"))
        print(
            f"-- catch-up, {n:,} customers, 1 vs {CATCHUP_LOADS} pending loads  [{load()}]",
            flush=True,
        )
        repeats = int(os.environ.get("FLOE_BENCH_SCD2_CATCHUP_REPEATS", "3"))
        runs = run_catchup(n, repeats)
        for i, t in enumerate(runs, 1):
            ratio = t["catch-up 5 loads"] / t["catch-up 1 load"]
            multi = t["catch-up 5 loads, one rendering"]
            print(
                f"  repeat {i}: 1 load {t['catch-up 1 load']:6.1f} s,"
                f" 5 loads {t['catch-up 5 loads']:6.1f} s, ratio {ratio:5.2f};"
                f" one rendering {multi:6.1f} s, ratio {multi / t['catch-up 1 load']:5.2f}"
            )
        ratios = sorted(t["catch-up 5 loads"] / t["catch-up 1 load"] for t in runs)
        print(
            f"  ratio 5 loads / 1 load, median of {len(runs)}   {ratios[len(ratios) // 2]:5.2f}"
            f"  (target <= 1.3, issue 30)  [{load()}]"
        )
        multis = sorted(t["catch-up 5 loads, one rendering"] / t["catch-up 1 load"] for t in runs)
        print(f"  ratio 5 loads in one rendering / 1 load       {multis[len(multis) // 2]:5.2f}")
    if "incremental" not in cases:
        return
    n = int(os.environ.get("FLOE_BENCH_SCD2_ROWS", "1000000"))
    sizes = [n, 5 * n] if os.environ.get("FLOE_BENCH_SCD2_GROWTH") == "1" else [n]
    # Each repeat is a fresh lakehouse in the same JVM, after one uncounted warm-up run
    # (cold, floe's build would warm the JIT for the hand MERGE timed after it).
    repeats = int(os.environ.get("FLOE_BENCH_SCD2_REPEATS", "3"))
    results = {}
    for size in sizes:
        print(f"-- {size:,} customers, 1 % changed, 0.1 % deleted  [{load()}]", flush=True)
        run_once(size)  # warm-up, not counted: the JIT, Spark's code generation
        runs = [run_once(size) for _ in range(repeats)]
        t = {name: sorted(r[name] for r in runs)[len(runs) // 2] for name in runs[0]}
        results[size] = t
        print(f"  medians of {repeats} repeats (each repeat's figure in brackets)  [{load()}]:")
        for name in t:
            each = ", ".join(f"{r[name]:.1f}" for r in runs)
            print(f"  {name:<34} {t[name]:7.1f} s   ({each})")

        def ratio(a: str, b: str, runs: list[dict[str, float]] = runs) -> str:
            values = sorted(r[a] / r[b] for r in runs)
            each = ", ".join(f"{r[a] / r[b]:.2f}" for r in runs)
            return f"{values[len(values) // 2]:5.2f}  ({each})"

        floe, snap, hand = (
            "incremental floe (changes)",
            "incremental stock snapshot",
            "incremental hand MERGE",
        )
        print(f"  ratio floe/snapshot (incremental)       {ratio(floe, snap)}  target <= 0.33")
        print(f"  ratio floe(full)/snapshot (incremental) {ratio('incremental floe (full)', snap)}")
        print(f"  ratio floe/hand MERGE (incremental)     {ratio(floe, hand)}  target <= 1.5")
        print(
            "  ratio floe/snapshot (initial load)      "
            f"{ratio('initial floe (changes)', 'initial stock snapshot')}"
        )
    if len(sizes) == 2:
        a, b = (results[s]["incremental floe (changes)"] for s in sizes)
        print(f"  growth 1x -> 5x rows: floe incremental x{b / a:.2f}")


if __name__ == "__main__":
    main()
