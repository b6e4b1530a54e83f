"""The analyst's edit-run loop: floe cold and warm (`floe dev`) against dbt-duckdb.

`python -m bench devloop`. Installs dbt-duckdb (same dbt-core minor) in a scratch venv
once (`FLOE_BENCH_DUCKDB_VENV`, default `~/.cache/floe/bench-duckdb-venv`), builds the
same small project for both engines (a 100,000-row table, a view over it, a table, a
table with two data tests), then times whole `dbt` processes as an analyst types them:

    dbt run -s one_view
    dbt compile -s one_view
    dbt show -s one_table --limit 5
    dbt build -s one_table_with_2_tests

Each command runs in turn with its dbt-duckdb twin (A B A B ..., so a drift of the
machine's speed hits both), `FLOE_BENCH_DEVLOOP_RUNS` times (default 10) warm and
`FLOE_BENCH_DEVLOOP_COLD_RUNS` times (default 10) cold; the medians are printed with
their ratio to dbt-duckdb and the load average. floe's table models are built every
time (`floe_skip_unchanged: false`), as dbt-duckdb's are.

The cold phase also runs floe's previous cold path in the same rounds (`cold0`: Spark
started only at the first connection, `FLOE_SPARK_PRESTART=false` (ADR 0043), and no
class-data-sharing archive, `FLOE_SPARK_CDS=off` (ADR 0052)) and prints cold / cold0.
cold0 shares every other cut of the cold path (the entry's exit, the relation cache), so
the cold start is also measured against the code as it was before any of them
(`base`: floe's source at commit `FLOE_BENCH_DEVLOOP_BASE`, default the one the cold
start work began from, exported with `git archive` and run by dbt's own CLI with it
first on `PYTHONPATH`; `FLOE_BENCH_DEVLOOP_BASE=` skips it): cold / base is the issue's
"cold vs today's cold" ratio. `FLOE_BENCH_DEVLOOP_COMMANDS=run,show` limits
the commands (by their dbt subcommand); `FLOE_BENCH_DEVLOOP_PHASES=cold,warm,entry`.
`FLOE_JVM_GC` and `FLOE_JVM_JIT` reach floe's processes (no other FLOE_ setting does).
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

from bench import jvm_knobs

ROOT = Path(__file__).resolve().parents[1]
# floe's commit before the cold-start work (the edit-run issue's "today's cold").
BASE_COMMIT = "07f4a690e058fc53bbc78e17dbe4507fd8b78e61"
DUCKDB_PINS = ["dbt-duckdb==1.11.1", "dbt-core~=1.11.0"]
ROWS = 100_000

COMMANDS: list[tuple[str, list[str]]] = [
    ("dbt run -s one_view", ["run", "-s", "one_view"]),
    ("dbt compile -s one_view", ["compile", "-s", "one_view"]),
    ("dbt show -s one_table --limit 5", ["show", "-s", "one_table", "--limit", "5"]),
    ("dbt build -s one_table_with_2_tests", ["build", "-s", "one_table_with_2_tests"]),
]
TARGETS = {  # warm floe / dbt-duckdb, from the issue
    "dbt run -s one_view": 1.5,
    "dbt show -s one_table --limit 5": 2.0,
    "dbt build -s one_table_with_2_tests": 2.0,
}

BASE_SQL = {
    "duckdb": f"select range as id, range % 100 as grp, 'name_' || range as name "
    f"from range({ROWS})",
    "floe": f"select id, id % 100 as grp, concat('name_', id) as name from range({ROWS})",
}
MODELS = {
    "one_view.sql": "select id, grp, name from {{ ref('base_table') }} where grp < 50\n",
    "one_table.sql": "select grp, count(*) as n from {{ ref('base_table') }} group by grp\n",
    "one_table_with_2_tests.sql": "select id, name from {{ ref('base_table') }} where grp = 7\n",
}
SCHEMA_YML = """version: 2
models:
  - name: one_table_with_2_tests
    columns:
      - name: id
        data_tests: [unique, not_null]
"""


def _project(root: Path, engine: str) -> Path:
    project = root / engine
    models = project / "models"
    models.mkdir(parents=True)
    # floe: Iceberg tables (as the floe project's), rebuilt each time as dbt-duckdb's are.
    meta = (
        "\n    +file_format: iceberg\n    +meta: {floe_skip_unchanged: false}"
        if engine == "floe"
        else ""
    )
    (project / "dbt_project.yml").write_text(
        f"name: devloop_{engine}\nversion: '0.1.0'\nconfig-version: 2\n"
        f"profile: {'floe' if engine == 'floe' else 'devloop_duckdb'}\n"
        f"model-paths: ['models']\nmodels:\n  devloop_{engine}:\n"
        f"    +materialized: table\n    +schema: devloop{meta}\n"
        f"    one_view:\n      +materialized: view\n"
    )
    # The schema as named (not `<target schema>_devloop`), like the floe project's.
    (project / "macros").mkdir()
    (project / "macros" / "generate_schema_name.sql").write_text(
        "{% macro generate_schema_name(custom_schema_name, node) %}"
        "{{ custom_schema_name or target.schema }}{% endmacro %}\n"
    )
    (models / "base_table.sql").write_text(BASE_SQL[engine] + "\n")
    for name, sql in MODELS.items():
        (models / name).write_text(sql)
    (models / "_models.yml").write_text(SCHEMA_YML)
    if engine == "duckdb":
        (project / "profiles.yml").write_text(
            "devloop_duckdb:\n  target: dev\n  outputs:\n    dev:\n      type: duckdb\n"
            f"      path: {project / 'dev.duckdb'}\n      threads: 1\n"
        )
    return project


def duckdb_venv() -> Path:
    """The scratch venv's python with dbt-duckdb (created on first use)."""
    venv = Path(
        os.environ.get("FLOE_BENCH_DUCKDB_VENV", Path.home() / ".cache/floe/bench-duckdb-venv")
    )
    dbt = venv / "bin" / "dbt"
    if not dbt.exists():
        print(f"installing {' '.join(DUCKDB_PINS)} into {venv} ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", *DUCKDB_PINS], check=True)
    return dbt


def _timed(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed:\n{done.stdout[-3000:]}{done.stderr[-2000:]}")
    return seconds


def _load() -> str:
    return "load average " + " ".join(f"{x:.1f}" for x in os.getloadavg())


Command = tuple[list[str], Path, dict[str, str]]


def _rounds(runs: int, *commands: Command) -> list[float]:
    """Medians of ``runs`` rounds, each running every command once, in turn."""
    seconds: list[list[float]] = [[] for _ in commands]
    for _ in range(runs):
        for times, command in zip(seconds, commands, strict=True):
            times.append(_timed(*command))
    return [statistics.median(times) for times in seconds]


def _pairs(label: str, runs: int, floe: Command, duck: Command) -> tuple[float, float]:
    """Medians of ``runs`` alternating runs of the floe and dbt-duckdb commands."""
    duck_median, floe_median = _rounds(runs, duck, floe)
    return floe_median, duck_median


def _base_source(work: Path) -> Path | None:
    """floe's ``src/`` at FLOE_BENCH_DEVLOOP_BASE, exported under ``work`` (None: skipped)."""
    commit = os.environ.get("FLOE_BENCH_DEVLOOP_BASE", BASE_COMMIT)
    if not commit:
        return None
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", commit, "src"], capture_output=True, check=False
    )
    if archive.returncode != 0:
        print(f"no base cold path: git archive {commit} failed: {archive.stderr.decode()[-300:]}")
        return None
    target = work / "base"
    target.mkdir()
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target / "src"


def main() -> None:
    warm_runs = int(os.environ.get("FLOE_BENCH_DEVLOOP_RUNS", "10"))
    cold_runs = int(os.environ.get("FLOE_BENCH_DEVLOOP_COLD_RUNS", "10"))
    duck_dbt = duckdb_venv()
    floe_dbt = str(Path(sys.executable).parent / "dbt")
    work = Path(tempfile.mkdtemp(prefix="floe-bench-devloop-"))
    try:
        duck_project, floe_project = _project(work, "duckdb"), _project(work, "floe")
        base_env = {k: v for k, v in os.environ.items() if not k.startswith(("FLOE_", "DBT_"))}
        base_env["DBT_SEND_ANONYMOUS_USAGE_STATS"] = "false"
        duck_env = {**base_env, "DBT_PROFILES_DIR": str(duck_project)}
        floe_env = {
            **base_env,
            "FLOE_HOME": str(work / "floe_home"),
            "DBT_PROFILES_DIR": str(ROOT / "profiles"),
            "FLOE_DRIVER_MEMORY": os.environ.get("FLOE_DRIVER_MEMORY", "2g"),
            **jvm_knobs(),
        }
        print(f"building both projects ({ROWS:,} rows) ... {_load()}", flush=True)
        _timed([str(duck_dbt), "build"], duck_project, duck_env)
        _timed([floe_dbt, "build"], floe_project, floe_env)

        phases = os.environ.get("FLOE_BENCH_DEVLOOP_PHASES", "cold,warm,entry").split(",")
        wanted = os.environ.get("FLOE_BENCH_DEVLOOP_COMMANDS")
        commands = [
            (label, args) for label, args in COMMANDS if not wanted or args[0] in wanted.split(",")
        ]
        results: dict[str, dict[str, float]] = {label: {} for label, _ in commands}
        if "cold" in phases:
            print(f"cold: medians of {cold_runs} rounds, each dbt-duckdb, floe's previous cold "
                  f"(cold0) and floe cold in turn; {_load()}")  # fmt: skip
            cold0_env = {**floe_env, "FLOE_SPARK_PRESTART": "false", "FLOE_SPARK_CDS": "off"}
            base_src = _base_source(work)
            base_env = {**cold0_env, "PYTHONPATH": f"{base_src}{os.pathsep}{ROOT}"}
            base_dbt = [sys.executable, "-m", "dbt.cli.main"]
            for label, args in commands:
                variants = [
                    ([str(duck_dbt), *args], duck_project, duck_env),
                    ([floe_dbt, *args], floe_project, cold0_env),
                    ([floe_dbt, *args], floe_project, floe_env),
                ]
                if base_src is not None:
                    variants.append(([*base_dbt, *args], floe_project, base_env))
                duck, cold0, cold, *base = _rounds(cold_runs, *variants)
                results[label].update(cold=cold, duck_cold=duck, cold0=cold0)
                based = ""
                if base:
                    results[label].update(base=base[0], duck_base=duck)
                    based = f"base {base[0]:6.2f} s  cold/base {cold / base[0]:4.2f}  "
                print(f"  {label:40s} floe cold {cold:6.2f} s {cold / duck:5.2f}x  "
                      f"cold0 {cold0:6.2f} s {cold0 / duck:5.2f}x  duckdb {duck:5.2f} s  "
                      f"cold/cold0 {cold / cold0:4.2f}  {based}({_load()})", flush=True)  # fmt: skip

        from floe.dev.cli import start_detached
        from floe.runtime.settings import Settings

        # floe's dbt entry (floe dev install-entry), in a scratch bin/ of its own.
        entry_bin = work / "entry-bin"
        subprocess.run([sys.executable, "-m", "floe.cli", "dev", "install-entry", "--bin-dir",
                        str(entry_bin)], check=True, capture_output=True)  # fmt: skip
        entries = {"warm": floe_dbt, "entry": str(entry_bin / "dbt")}
        settings = Settings.from_env(floe_env)
        saved = dict(os.environ)
        os.environ.update(floe_env)
        try:
            pid = start_detached(settings)[0] if {"warm", "entry"} & set(phases) else 0
        finally:
            os.environ.clear()
            os.environ.update(saved)
        try:
            for phase in ("warm", "entry"):
                if phase not in phases:
                    continue
                dbt = entries[phase]
                print(f"{phase} (floe dev pid {pid}, {dbt}): medians of {warm_runs} runs each; "
                      f"{_load()}")  # fmt: skip
                for label, args in commands:
                    floe_cmd = ([dbt, *args], floe_project, floe_env)
                    duck_cmd = ([str(duck_dbt), *args], duck_project, duck_env)
                    _timed(*floe_cmd)  # the first warm run parses this project in the session
                    warm, duck = _pairs(label, warm_runs, floe_cmd, duck_cmd)
                    results[label].update({phase: warm, f"duck_{phase}": duck})
                    print(f"  {label:40s} floe {phase} {warm:6.2f} s  duckdb {duck:5.2f} s  "
                          f"{warm / duck:5.2f}x  ({_load()})", flush=True)  # fmt: skip
        finally:
            subprocess.run([sys.executable, "-m", "floe.cli", "dev", "stop"], env=floe_env,
                           capture_output=True, check=False)  # fmt: skip

        print(f"\nmedians of {cold_runs} cold and {warm_runs} warm runs; "
              "ratio = floe / dbt-duckdb measured in turn with it")  # fmt: skip
        print("(warm: dbt's own `dbt` script; entry: floe's `dbt` entry, floe dev install-entry)")
        for label, r in results.items():
            cells = []
            for phase in ("base", "cold0", "cold", "warm", "entry"):
                if phase in r:
                    ratio = r[phase] / r[f"duck_{phase.rstrip('0')}"]
                    cells.append(f"{phase} {r[phase]:6.2f} s {ratio:5.2f}x")
            target = TARGETS.get(label)
            best = min((r[p] / r[f"duck_{p}"] for p in ("warm", "entry") if p in r), default=None)
            verdict = ""
            if target is not None and best is not None:
                verdict = f"  target <= {target}x: {'met' if best <= target else 'MISSED'}"
            print(f"{label:40s} " + "  ".join(cells) + verdict)
        run = results.get("dbt run -s one_view", {})
        if "cold0" in run:
            print(f"cold / previous cold (cold0) `dbt run -s one_view`: "
                  f"{run['cold'] / run['cold0']:.2f}x")  # fmt: skip
        if "base" in run:
            print(f"cold / cold before the work (base) `dbt run -s one_view`: "
                  f"{run['cold'] / run['base']:.2f}x (target <= 0.6x)")  # fmt: skip
        for phase in ("warm", "entry"):
            if "cold" in run and phase in run:
                print(f"{phase} / cold `dbt run -s one_view`: {run[phase] / run['cold']:.2f}x")
        print(_load())
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
