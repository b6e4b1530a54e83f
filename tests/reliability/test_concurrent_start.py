"""Writers that start at the same moment on one warehouse take turns from their start.

Starting a SparkSession on floe's catalog creates the fixed schemas (Iceberg
namespaces): already a catalog write. When ``dbt build`` took the writer lock only
after that, two builds started together raced on it and the loser died with SQLite's
``SQLITE_BUSY_SNAPSHOT`` trace instead of waiting its turn. Catalog contention that
remains (a program outside floe's writers) is a clear error naming the other writer
(docs/reliability.md, "Concurrent writers").
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from floe.runtime import Settings, open_catalog, use_settings
from floe.runtime.locking import catalog_busy, is_catalog_contention

HOLDER = """
import time
from floe.runtime import Settings
from floe.runtime.locking import acquire
acquire(Settings.from_env(), "holder", command="holder for a test")
print("held", flush=True)
time.sleep(600)
"""

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
MODELS = {
    "first.sql": "{{ config(materialized='table') }}\nselect 1 as id, 'a' as name",
    "second.sql": "{{ config(materialized='table') }}\nselect id + 1 as id from {{ ref('first') }}",
}
PROJECT = """
name: floe_concurrent_fixture
version: "0.1.0"
config-version: 2
profile: floe
model-paths: ["models"]
models:
  floe_concurrent_fixture:
    +file_format: iceberg
    +schema: marts
"""


def _project(root: Path) -> Path:
    project = root / "project"
    (project / "models").mkdir(parents=True)
    (project / "dbt_project.yml").write_text(PROJECT)
    for name, sql in MODELS.items():
        (project / "models" / name).write_text(sql)
    return project


def _build(project: Path, env: dict[str, str], name: str, logs: Path) -> subprocess.Popen:
    target = logs / f"target-{name}"
    argv = [
        str(BIN / "dbt"),
        "build",
        "--project-dir",
        str(project),
        "--profiles-dir",
        str(ROOT / "profiles"),
        "--target-path",
        str(target),
        "--log-path",
        str(target / "logs"),
    ]
    out = (logs / f"{name}.log").open("w")
    return subprocess.Popen(
        argv, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
    )


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FLOE_", "DBT_"))}
    env.update(
        FLOE_HOME=str(home),
        FLOE_SPARK_CORES="1",
        FLOE_DRIVER_MEMORY="1g",
        FLOE_THREADS="1",
        DBT_SEND_ANONYMOUS_USAGE_STATS="false",
    )
    return env


def _namespaces(catalog_db: Path) -> list[str]:
    """The Iceberg namespaces recorded in a SQLite catalog file (none if it is new)."""
    if not catalog_db.exists():
        return []
    with sqlite3.connect(catalog_db) as conn:
        known = {r[0] for r in conn.execute("select name from sqlite_master")}
        if "iceberg_namespace_properties" not in known:
            return []
        return sorted(
            {r[0] for r in conn.execute("select namespace from iceberg_namespace_properties")}
        )


def test_a_waiting_build_writes_nothing_to_the_catalog_before_its_turn(tmp_path):
    """Deterministic form of the race: the build waits before its session touches the catalog."""
    project = _project(tmp_path)
    home = tmp_path / "floe"
    env = _env(home)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER], env=env, stdout=subprocess.PIPE, text=True
    )
    build = None
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        build = _build(project, env, "waiting", tmp_path)
        log = tmp_path / "waiting.log"
        # Ends when the build says it waits, or exits (its writer-lock wait is bounded by
        # FLOE_LOCK_TIMEOUT, 600 s by default): no clock in the test.
        while "for the writer lock held by" not in log.read_text() and build.poll() is None:
            time.sleep(0.2)
        assert f"pid {holder.pid}" in log.read_text(), log.read_text()[-3000:]
        time.sleep(1)  # a build that did not wait first would be writing namespaces now
        assert _namespaces(home / "catalog.db") == [], "the build wrote before its turn"
        holder.kill()
        holder.wait()
        assert build.wait(timeout=600) == 0, log.read_text()[-3000:]
    finally:
        for proc in (holder, build):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
    assert "marts" in _namespaces(home / "catalog.db")


@pytest.mark.chaos
def test_two_builds_started_together_on_a_fresh_warehouse_take_turns(tmp_path):
    """End to end (the race itself is a matter of milliseconds: not every pair hits it)."""
    project = _project(tmp_path)
    home = tmp_path / "floe"
    env = _env(home)
    procs = [_build(project, env, name, tmp_path) for name in ("one", "two")]
    try:
        codes = [p.wait(timeout=600) for p in procs]
    finally:
        for proc in procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    logs = {name: (tmp_path / f"{name}.log").read_text() for name in ("one", "two")}
    said = "\n".join(logs.values())
    assert "SQLITE_BUSY" not in said, said[-4000:]
    assert codes == [0, 0], said[-4000:]
    assert "for the writer lock held by" in said, "no build waited for the other"
    catalog = open_catalog(Settings.from_env({"FLOE_HOME": str(home)}))
    rows = catalog.load_table(("marts", "second")).scan().to_arrow().to_pylist()
    assert rows == [{"id": 2}]


def test_catalog_contention_names_the_other_writer(tmp_path):
    home = tmp_path / "floe"
    settings = Settings.from_env({"FLOE_HOME": str(home)})
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER], env=_env(home), stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        error = "org.sqlite.SQLiteException: [SQLITE_BUSY_SNAPSHOT] Another database ..."
        assert is_catalog_contention(error)
        said = str(catalog_busy(settings, error, "running a dbt statement"))
    finally:
        holder.kill()
        holder.wait()
    assert f"pid {holder.pid}" in said and "holder for a test" in said, said
    assert "run this command again" in said and "docs/reliability.md" in said
    assert not is_catalog_contention("Table or view not found: marts.x")


def test_a_dbt_statement_refused_by_a_busy_catalog_is_a_clear_error(spark, lakehouse, tmp_path):
    """A program outside floe's writers holds SQLite's write lock: the node fails with
    floe's message, not the JDBC driver's trace."""
    from floe.dbt_runner import run_dbt

    project = _project(tmp_path)
    busy = Settings.from_env(
        {
            "FLOE_HOME": str(lakehouse.home),
            "FLOE_CATALOG_URI": f"jdbc:sqlite:{lakehouse.home}/catalog.db"
            "?journal_mode=WAL&busy_timeout=300",
        }
    )
    use_settings(spark, busy)
    outsider = sqlite3.connect(lakehouse.home / "catalog.db", isolation_level=None)
    try:
        outsider.execute("begin immediate")  # SQLite's write lock, held by a non-floe program
        run = run_dbt(
            ["run", "-s", "first"], project=project, target_path=tmp_path / "t", quiet=True
        )
    finally:
        outsider.execute("rollback")
        outsider.close()
    assert not run.success
    said = f"{run.exception} {run.failures}"
    assert "refused a write while" in said and "run this command again" in said, said
