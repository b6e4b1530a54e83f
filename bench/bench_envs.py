"""Environments on Iceberg branches (docs/envs.md), side by side in one SparkSession.

A generated project: K independent tables and a chain base -> mart -> child, N rows
each (FLOE_BENCH_ENVS_ROWS, default 1,000,000). FLOE_BENCH_ENVS_OTHERS is K, or a list
of K ("8,40", the default): each project size runs in a process of its own, so the
ratio of item 1 is printed as a curve over project size (the environment's cost grows
with the changed models, the full build's with every model: ADR 0056).
Production is built first; then one change to the mart is tried:

1. The change is an edit of b_mart.sql (1 % of its rows change). *environment*:
   `floe env create` + `FLOE_ENV=... dbt build -s state:modified+ --state <production's
   manifest>` (slim CI: the mart and its downstream rebuilt on branches, the rest read
   from main), vs *separate schema*: a full `dbt build` into `ci_*` schemas
   (`--vars {schema_prefix: ci_}`), what dbt-spark users do. Time ratio, and data
   bytes written by each.
   Target: <= 0.2 x time of the full build, bytes only for the rebuilt models.
2. *publish* of the changed tables: data bytes written (target 0: metadata only).
3. *diff* of the mart (N rows, 1 % changed) vs a plain full outer join on the key that
   counts differing rows, both in a fresh process on the same warehouse, as `floe env
   diff` runs (FLOE_BENCH_ENVS_DIFF_HERE=1: in the session that ran the builds).
   Target: <= 1.2 x.

FLOE_BENCH_ENVS_REPEATS (default 5): the diff pair is timed that many times, in
alternating order (which one runs first changes from round to round), medians.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _load() -> str:
    return "load average " + " ".join(f"{x:.1f}" for x in os.getloadavg())


def _write_project(root: Path, others: int) -> Path:
    models = root / "models"
    models.mkdir(parents=True)
    (root / "dbt_project.yml").write_text(
        "name: floe_bench_envs\nversion: '0.1.0'\nconfig-version: 2\nprofile: floe\n"
        "model-paths: ['models']\nmodels:\n  floe_bench_envs:\n"
        "    +file_format: iceberg\n    +materialized: table\n    +schema: marts\n"
    )
    rows = "{{ var('rows') }}"
    (models / "b_base.sql").write_text(
        f"select id, id % 1000 as grp, concat('name-', id) as name from range({rows})\n"
    )
    _write_mart(root, factor=1)
    (models / "b_child.sql").write_text(
        "select grp, count(*) as n, sum(amount) as total from {{ ref('b_mart') }} group by grp\n"
    )
    for i in range(others):
        (models / f"b_other_{i}.sql").write_text(
            f"select id, id * {i} as v, concat('other-{i}-', id) as s from range({rows})\n"
        )
    return root


def _write_mart(root: Path, factor: int) -> None:
    # 1 % of the rows change when `factor` changes: the edit under review.
    (root / "models" / "b_mart.sql").write_text(
        f"select id, grp, name, case when id % 100 = 7 then id * {factor} "
        "else id end as amount from {{ ref('b_base') }}\n"
    )


def _data_bytes(warehouse: Path) -> int:
    return sum(
        p.stat().st_size for p in warehouse.rglob("*.parquet") if "/metadata/" not in p.as_posix()
    )


def _timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def main() -> None:
    sizes = [int(k) for k in os.environ.get("FLOE_BENCH_ENVS_OTHERS", "8,40").split(",")]
    if len(sizes) == 1:
        _one_size(sizes[0])
        return
    for k in sizes:  # a fresh process (session, warehouse) per project size
        print(f"\n--- project size: {k} other tables ---", flush=True)
        subprocess.run(
            [sys.executable, "-m", "bench.bench_envs"],
            env={**os.environ, "FLOE_BENCH_ENVS_OTHERS": str(k)},
            cwd=ROOT,
            check=True,
        )


def _one_size(others: int) -> None:
    n = int(os.environ.get("FLOE_BENCH_ENVS_ROWS", "1000000"))
    repeats = int(os.environ.get("FLOE_BENCH_ENVS_REPEATS", "5"))
    scratch = Path(tempfile.mkdtemp(prefix="floe-bench-envs-"))
    os.environ["FLOE_HOME"] = str(scratch / "home")
    for var in ("FLOE_LANDING", "FLOE_WAREHOUSE", "FLOE_CATALOG_URI", "FLOE_ENV"):
        os.environ.pop(var, None)

    from floe.dbt_runner import run_dbt
    from floe.envs import create, publish
    from floe.runtime import Settings, get_spark

    settings = Settings.from_env()
    spark = get_spark(settings)
    warehouse = settings.home / "warehouse"
    project = _write_project(scratch / "project", others)

    built: list[int] = []
    fixed: list[float] = []  # seconds until dbt started its first node: parse, cache

    def dbt(args: list[str], **vars) -> None:
        run = run_dbt(
            args,
            vars={"rows": n, **vars},
            project=project,
            profiles_dir=ROOT / "profiles",
            target_path=scratch / "target",
            quiet=True,
        )
        if not run.success:
            raise RuntimeError(f"dbt {args} failed: {run.failures or run.exception}")
        built.append(len(getattr(run.result, "results", None) or []))
        fixed.append(run.first_node_seconds or 0.0)

    print(f"{n:,} rows per table, {others} other tables + base -> mart -> child; {_load()}")
    dbt(["build"])  # production
    state = scratch / "prod-state"
    state.mkdir()
    shutil.copy(scratch / "target" / "manifest.json", state / "manifest.json")
    _write_mart(project, factor=2)  # the change under review
    slim = ["build", "-s", "state:modified+", "--state", str(state)]

    # 1. separate schema (full build) vs environment (changed mart + downstream)
    before = _data_bytes(warehouse)
    full = _timed(lambda: dbt(["build"], schema_prefix="ci_"))
    full_fixed = fixed[-1]
    full_bytes = _data_bytes(warehouse) - before

    parts: dict[str, float] = {}

    def in_env() -> None:
        parts["create"] = _timed(lambda: create(spark, settings, "bench"))
        os.environ["FLOE_ENV"] = "bench"
        try:
            parts["build"] = _timed(lambda: dbt(slim))
            parts["nodes"] = built[-1]
            parts["fixed"] = fixed[-1]
        finally:
            os.environ.pop("FLOE_ENV", None)

    before = _data_bytes(warehouse)
    env_time = _timed(in_env)
    env_bytes = _data_bytes(warehouse) - before
    print(
        f"separate schema (full build): {full:.1f} s, {full_bytes / 1e6:.1f} MB data written; "
        f"environment (create {parts['create']:.1f} s + build state:modified+, "
        f"{parts['nodes']:.0f} nodes, {parts['build']:.1f} s): {env_time:.1f} s, {env_bytes / 1e6:.1f} MB; "
        f"ratio {env_time / full:.2f}x time, {env_bytes / max(full_bytes, 1):.2f}x bytes "
        f"(target <= 0.2x); {_load()}"
    )
    print(
        f"  dbt's fixed cost (start, parse, adapter cache, until the first node): "
        f"full build {full_fixed:.1f} s, environment build {parts['fixed']:.1f} s; nodes: "
        f"full {full - full_fixed:.1f} s, environment {parts['build'] - parts['fixed']:.1f} s"
    )

    # 3. diff (before publish: the branch differs from main in 1 % of the mart), in a
    # fresh process on this warehouse, as `floe env diff` runs (ADR 0056: in the session
    # that has just run the builds, even a bare join with the diff's filter is 1.2x the
    # plain join); FLOE_BENCH_ENVS_DIFF_HERE=1 times it in this session instead.
    if os.environ.get("FLOE_BENCH_ENVS_DIFF_HERE") == "1":
        _diff_pair(spark, repeats, "the build's session")
    else:
        sys.stdout.flush()
        subprocess.run(
            [sys.executable, "-m", "bench.bench_envs"],
            env={**os.environ, "FLOE_BENCH_ENVS_DIFF_ONLY": "1"},
            cwd=ROOT,
            check=True,
        )

    # 2. publish
    before = _data_bytes(warehouse)
    plan = {}
    publish_time = _timed(lambda: plan.update(publish(spark, settings, "bench")))
    print(
        f"publish of {len(plan)} tables: {publish_time:.2f} s, "
        f"{_data_bytes(warehouse) - before} data bytes written (target 0); {_load()}"
    )


def _diff_pair(spark, repeats: int, where: str) -> None:
    """`floe env diff`'s diff of marts.b_mart against a plain full outer join that
    counts the differing rows, timed in turn (alternating order), medians."""
    from pyspark.sql import functions as F

    from floe.envs.diff import diff_table

    def plain_join() -> int:
        m = spark.sql("select * from marts.b_mart version as of 'main'")
        b = spark.sql("select * from marts.b_mart version as of 'env_bench'")
        j = m.alias("m").join(b.alias("b"), on="id", how="full_outer")
        differs = ~F.col("m.amount").eqNullSafe(F.col("b.amount"))
        for c in ("grp", "name"):
            differs = differs | ~F.col(f"m.{c}").eqNullSafe(F.col(f"b.{c}"))
        return j.where(differs).count()

    floe_times: list[float] = []
    join_times: list[float] = []
    for i in range(repeats):
        pair = [
            (join_times, plain_join),
            (floe_times, lambda: diff_table(spark, "marts.b_mart", "env_bench", ["id"])),
        ]
        for times, fn in pair if i % 2 == 0 else reversed(pair):
            times.append(_timed(fn))
    result = diff_table(spark, "marts.b_mart", "env_bench", ["id"], examples=5)
    f_med, j_med = statistics.median(floe_times), statistics.median(join_times)
    print(
        f"diff of marts.b_mart ({result.counts}, columns {result.changed_columns}), in "
        f"{where}: floe {f_med:.2f} s vs plain full outer join {j_med:.2f} s (medians of "
        f"{repeats}), ratio {f_med / j_med:.2f}x (target <= 1.2x); {_load()}",
        flush=True,
    )


def _diff_only() -> None:
    """The diff pair in a process of its own, on the warehouse FLOE_HOME names."""
    from floe.runtime import Settings, get_spark

    repeats = int(os.environ.get("FLOE_BENCH_ENVS_REPEATS", "5"))
    _diff_pair(get_spark(Settings.from_env()), repeats, "a fresh process")


if __name__ == "__main__":
    _diff_only() if os.environ.get("FLOE_BENCH_ENVS_DIFF_ONLY") == "1" else main()
