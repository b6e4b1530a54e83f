"""Small helpers shared by tests: the project's declared feeds, snapshots, landed lines,
a loopback PostgreSQL."""

from __future__ import annotations

import itertools
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


# The parts of the project a copy needs to parse, build and run dbt (tests that change
# the project work on a copy, never on the repository).
PROJECT_PARTS = (
    "dbt_project.yml",
    "models",
    "python_models",
    "schemas",
    "macros",
    "seeds",
    "snapshots",
    "profiles",
)


def copy_project(
    target: Path, overlay: Path | None = None, parts: Iterable[str] = (), skip: Iterable[str] = ()
) -> Path:
    """A copy of the project at ``target``, then ``overlay``'s files on top (a fixture
    project's new feed, say): all of them, or those under ``parts``, but the relative
    paths in ``skip`` (files the test adds its own way)."""
    target.mkdir(parents=True)
    for name in PROJECT_PARTS:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, target / name)
        elif src.exists():
            shutil.copy(src, target / name)
    if overlay is not None:
        roots = [overlay / part for part in parts] or [overlay]
        skipped = set(skip)
        for root in roots:
            for path in root.rglob("*"):
                rel = path.relative_to(overlay)
                if path.is_file() and rel.as_posix() not in skipped:
                    (target / rel).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy(path, target / rel)
    return target


@lru_cache(maxsize=1)
def project_feeds() -> tuple:
    from floe.feeds import load_feeds

    return tuple(load_feeds(ROOT))


def feed(name: str):
    from floe.feeds import find_feed

    return find_feed(project_feeds(), name)


def feeds_of(kind: str) -> list:
    return [f for f in project_feeds() if f.kind == kind]


def current_snapshot(spark, table: str):
    rows = spark.sql(
        f"select snapshot_id from {table}.snapshots order by committed_at desc limit 1"
    ).collect()
    return rows[0][0] if rows else None


def landed_lines(landing: Path, folder: str) -> dict[str, int]:
    """Ledger key -> non-blank lines of every JSONL file under ``landing/folder``."""
    return {
        p.relative_to(landing).as_posix(): sum(1 for line in p.read_text().splitlines() if line)
        for p in (landing / folder).rglob("*.jsonl")
    }


def executed_plans(spark, since: int = -1) -> dict[int, str]:
    """Physical plans of the SQL executions after execution id ``since``, by id.

    Read from Spark's SQL status store, which keeps them whether the UI runs or not: what
    a statement run through dbt actually executed, not a plan re-derived by EXPLAIN.
    """
    plans = {}
    # The status store is fed by the listener bus, after the action returned.
    spark.sparkContext._jsc.sc().listenerBus().waitUntilEmpty()
    executions = spark._jsparkSession.sharedState().statusStore().executionsList().iterator()
    while executions.hasNext():
        execution = executions.next()
        if execution.executionId() > since:
            plans[execution.executionId()] = execution.physicalPlanDescription()
    return plans


_JOB_GROUPS = itertools.count()


def spark_jobs(spark, action) -> int:
    """How many Spark jobs ``action()`` ran (a job group of its own, read from the
    status tracker once the asynchronous listener bus has caught up)."""
    tracker = spark.sparkContext.statusTracker()
    group = f"floe-test-jobs-{next(_JOB_GROUPS)}"
    spark.sparkContext.setJobGroup(group, "floe test")
    try:
        action()
    finally:
        spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)
    spark.sparkContext._jsc.sc().listenerBus().waitUntilEmpty()
    return len(tracker.getJobIdsForGroup(group))


def last_execution_id(spark) -> int:
    return max(executed_plans(spark), default=-1)


# The variables that locate a lakehouse (docs/runtime.md).
LOCATION_VARS = ("FLOE_HOME", "FLOE_LANDING", "FLOE_WAREHOUSE", "FLOE_CATALOG_URI")


def location_env(settings) -> dict[str, str]:
    """The variables naming the lakehouse of ``settings``, for a CLI command or a child."""
    return {
        "FLOE_HOME": str(settings.home),
        "FLOE_LANDING": str(settings.landing),
        "FLOE_WAREHOUSE": settings.warehouse,
        "FLOE_CATALOG_URI": settings.catalog_uri,
    }


def use_lakehouse(spark, settings) -> None:
    """Point the shared session at ``settings`` (floe.runtime.use_settings) and this test
    process's environment at the same lakehouse, for the CLI commands tests run in-process
    (a CLI command is an edge: it builds its settings from the environment). Callers
    restore the environment afterwards."""
    import os

    from floe.runtime import use_settings

    use_settings(spark, settings)
    os.environ.update(location_env(settings))


@dataclass(frozen=True)
class LoopbackPostgres:
    """A running loopback PostgreSQL (floe.cluster's own) with an empty database."""

    root: Path
    uri: str
    user: str
    password: str


@contextmanager
def loopback_postgres(prefix: str) -> Iterator[LoopbackPostgres]:
    """Start floe.cluster's PostgreSQL on a free loopback port; skip the test where none is
    installed. Its folder is not under pytest's tmp (mode 0700): as root, PostgreSQL runs
    as 'postgres', which must be able to enter the folders above its data directory."""
    from floe.cluster.postgres import SUPERUSER, Postgres
    from floe.cluster.processes import ClusterError, free_port

    root = Path(tempfile.mkdtemp(prefix=prefix))
    root.chmod(0o711)
    try:
        pg = Postgres.for_cluster(root, None, "postgres")
    except ClusterError as exc:
        shutil.rmtree(root, ignore_errors=True)
        pytest.skip(f"no PostgreSQL here: {exc}")
    pg.init()
    port = free_port()
    pg.start(port, 60)
    try:
        yield LoopbackPostgres(root, pg.uri(port), SUPERUSER, pg.password())
    finally:
        pg.stop()
        shutil.rmtree(root, ignore_errors=True)
