"""The same project, unchanged, on a Spark cluster with the catalog in PostgreSQL.

One loopback cluster (conftest.py) for the module: `floe cluster up`, then one small
landing zone built twice — `dbt build --target local` (embedded Spark, SQLite catalog)
and `dbt build --target cluster` (this dbt process as the driver of a standalone
master, executors on the worker, PostgreSQL catalog) — and every table of both
compared; the cluster application's event log must show every task on the worker's
executors; the local catalog is migrated into PostgreSQL and read back by pyiceberg
and by Spark; `floe cluster down` leaves no process behind.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from floe.cluster.eventlog import event_logs, read_placement
from floe.cluster.processes import ProcessRef, get_json
from floe.runtime import Settings
from floe.runtime.tables import VOLATILE_COLUMNS, compare_fingerprints, lakehouse_fingerprints
from tests.cluster.support import Cluster, child_env, processes_under, run

pytestmark = [pytest.mark.integration, pytest.mark.cluster]

DAYS, SCALE = 2, 10
SCHEMAS_WITH_TABLES = {"raw", "marts", "dq", "audit"}


@dataclass
class Builds:
    landing: Path
    local: Settings
    cluster: Settings
    cluster_env: dict[str, str]


@pytest.fixture(scope="module")
def builds(cluster: Cluster) -> Builds:
    from floe.generator import GenerateOptions, generate

    landing = cluster.root / "landing"
    generate(GenerateOptions(landing=landing, days=DAYS, scale=SCALE))
    local_home = cluster.root / "local-home"
    local_env = child_env(
        FLOE_HOME=str(local_home),
        FLOE_LANDING=str(landing),
        DBT_TARGET_PATH=str(cluster.root / "target-local"),
        DBT_LOG_PATH=str(cluster.root / "logs-local"),
    )
    cluster_env = child_env(
        **cluster.env,
        FLOE_LANDING=str(landing),
        DBT_TARGET_PATH=str(cluster.root / "target-cluster"),
        DBT_LOG_PATH=str(cluster.root / "logs-cluster"),
    )
    run(["dbt", "build", "--target", "cluster"], cluster_env)
    run(["dbt", "build", "--target", "local"], local_env)
    return Builds(
        landing=landing,
        local=Settings.from_env(local_env),
        cluster=Settings.from_env(cluster_env),
        cluster_env=cluster_env,
    )


def test_up_twice_starts_nothing_and_status_says_where(cluster: Cluster):
    env = child_env(FLOE_HOME=str(cluster.home))
    before = cluster.state()
    out = run(["floe", "cluster", "up"], env).stdout
    for name in ("postgres", "master", "worker"):
        assert f"{name:<9} already running" in out
    assert cluster.state() == before, "a second up starts nothing and records nothing new"

    status = {
        s["name"]: s for s in json.loads(run(["floe", "cluster", "status", "--json"], env).stdout)
    }
    assert all(s["running"] for s in status.values())
    for name in ("postgres", "master", "worker"):
        assert status[name]["pid"] == before[name]["process"]["pid"]
    assert status["master"]["address"] == cluster.env["FLOE_SPARK_MASTER"]
    assert status["postgres"]["address"] == cluster.env["FLOE_CATALOG_URI"]
    master = get_json(f"http://127.0.0.1:{before['master']['ports']['webui']}/json/")
    assert master["status"] == "ALIVE"
    assert [(w["port"], w["state"], w["cores"]) for w in master["workers"]] == [
        (before["worker"]["ports"]["port"], "ALIVE", 2)
    ]


def test_cluster_build_equals_local_build(builds: Builds):
    local = lakehouse_fingerprints(builds.local)
    on_cluster = lakehouse_fingerprints(builds.cluster)
    assert compare_fingerprints(local, on_cluster) == []
    schemas = {name.split(".")[0] for name in local}
    assert schemas >= SCHEMAS_WITH_TABLES
    assert {"raw.quarantine", "raw.landed_files", "dq.metrics", "dq.check_results"} <= set(local)
    assert all(fp.rows > 0 for name, fp in local.items() if name.startswith("marts."))

    # The columns left out are exactly the volatile ones, and each does differ between
    # the two builds: load timestamps, run ids, snapshot ids are per build, not per input.
    from floe.runtime import open_catalog

    ignored = {c for fp in local.values() for c in fp.ignored}
    assert ignored == set(VOLATILE_COLUMNS)
    # `_load_seq` is order-, not time-dependent: two builds whose parallel raw models
    # happen to commit in the same order number their batches alike.
    for column in sorted(ignored - {"_load_seq"}):
        table = next(name for name, fp in local.items() if column in fp.ignored and fp.rows)
        values = [
            sorted(
                map(str, open_catalog(s).load_table(table).scan().to_arrow()[column].to_pylist())
            )
            for s in (builds.local, builds.cluster)
        ]
        if set(values[0]) == set(values[1]) == {"None"}:
            continue  # a snapshot's dbt_valid_to: no version closed yet in either build
        assert values[0] != values[1], f"{table}.{column} is the same in both builds"


def test_every_task_ran_on_the_workers_executors(cluster: Cluster, builds: Builds):
    logs = event_logs(cluster.home / "cluster" / "events")
    placement = read_placement(logs[0])  # the first application: the cluster build
    assert placement.master == cluster.env["FLOE_SPARK_MASTER"]
    assert sum(placement.tasks.values()) > 0
    assert placement.tasks_on_driver == 0, placement.tasks
    assert set(placement.tasks) <= set(placement.executors)
    assert set(placement.executors.values()) == {"127.0.0.1"}
    # Python models ran Python (the stream decode's mapInArrow) in the executors.
    assert sum(placement.python_tasks.values()) > 0
    assert "driver" not in placement.python_tasks

    # The worker itself says it ran this application's executors.
    state = cluster.state()
    worker = get_json(f"http://127.0.0.1:{state['worker']['ports']['webui']}/json/")
    ran = {str(e["id"]) for e in worker["finishedexecutors"] if e["appid"] == placement.app_id}
    assert ran >= set(placement.tasks)
    master = get_json(f"http://127.0.0.1:{state['master']['ports']['webui']}/json/")
    assert placement.app_id in {a["id"] for a in master["completedapps"]}


def test_migrate_local_catalog_into_postgresql(cluster: Cluster, builds: Builds):
    import psycopg2

    from floe.runtime.catalog import CatalogDatabase, open_catalog_at
    from floe.runtime.catalog_migration import CatalogMigrationError, migrate_catalog, read_entries

    port = cluster.state()["postgres"]["ports"]["port"]
    user, password = cluster.env["FLOE_CATALOG_USER"], cluster.env["FLOE_CATALOG_PASSWORD"]
    conn = psycopg2.connect(
        host="127.0.0.1", port=port, user=user, password=password, dbname="floe"
    )
    conn.autocommit = True
    with conn.cursor() as cur:
        cur.execute("create database floe_migrated")
    conn.close()
    source = CatalogDatabase.of(builds.local)
    target = CatalogDatabase(f"jdbc:postgresql://127.0.0.1:{port}/floe_migrated", user, password)

    report = migrate_catalog(source, target, warehouse=builds.local.warehouse)
    from sqlalchemy import create_engine

    with create_engine(source.url()).connect() as c:
        entries = read_entries(c, "lake")
    assert sorted(report.copied) == sorted(e.identifier for e in entries)
    assert {e.kind for e in entries} == {"TABLE", "VIEW"}, "staging views move too"
    assert sorted(report.verified) == sorted(e.identifier for e in entries if e.kind == "TABLE")

    # The same warehouse files through the new catalog: pyiceberg reads identical tables.
    migrated = Settings.from_env(
        {
            "FLOE_HOME": str(builds.local.home),
            "FLOE_CATALOG_URI": target.uri,
            "FLOE_CATALOG_USER": user,
            "FLOE_CATALOG_PASSWORD": password,
        }
    )
    assert (
        compare_fingerprints(lakehouse_fingerprints(builds.local), lakehouse_fingerprints(migrated))
        == []
    )

    # Idempotent, through the CLI: nothing left to copy.
    out = run(
        ["floe", "catalog", "migrate", "--to", target.uri],
        child_env(
            FLOE_HOME=str(builds.local.home),
            FLOE_CATALOG_USER=user,
            FLOE_CATALOG_PASSWORD=password,
        ),
    ).stdout
    assert (
        "copied 0 entries, 0 namespaces" in out
        and f"already there (same metadata): {len(entries)}" in out
    )

    # Diverged catalogs: the cluster's own catalog holds other versions of every table.
    cluster_db = CatalogDatabase.of(builds.cluster)
    with create_engine(cluster_db.url()).connect() as c:
        before = read_entries(c, "lake")
    with pytest.raises(CatalogMigrationError, match=r"other versions(.|\n)*raw\.landed_files"):
        migrate_catalog(source, cluster_db, warehouse=builds.local.warehouse)
    with create_engine(cluster_db.url()).connect() as c:
        assert read_entries(c, "lake") == before, "nothing written"

    # Spark on the cluster reads every migrated table and view through PostgreSQL.
    catalog = open_catalog_at(target, builds.local.warehouse)
    expected = {
        ".".join(t): len(catalog.load_table(t).scan().to_arrow())
        for ns in ("raw", "marts")
        for t in catalog.list_tables(ns)
    }
    env = dict(
        builds.cluster_env,
        FLOE_CATALOG_URI=target.uri,
        FLOE_WAREHOUSE=builds.local.warehouse,
        FLOE_HOME=str(cluster.root / "reader-home"),
        FLOE_SPARK_EVENT_LOG="",
    )
    counts = json.loads(
        run(["python", str(Path(__file__).with_name("count_rows.py"))], env).stdout.splitlines()[-1]
    )
    assert {k: v for k, v in counts.items() if k in expected} == expected
    views = [name for name in counts if name.startswith("staging.")]
    assert views and all(counts[v] >= 0 for v in views)


def test_a_merge_reads_rows_frozen_on_the_workers(cluster: Cluster, builds: Builds):
    """The scd2 materialization's freeze_view (docs/scd2.md, "One statement") on executors."""
    env = dict(builds.cluster_env, FLOE_SPARK_EVENT_LOG="")
    out = json.loads(
        run(["python", str(Path(__file__).with_name("freeze_merge.py"))], env).stdout.splitlines()[
            -1
        ]
    )
    assert out["master"] == cluster.env["FLOE_SPARK_MASTER"]
    assert out["frozen"] == [[2, "A"], [3, "B"]]  # computed once, before the MERGE
    assert out["table"] == [[1, "a"], [2, "A"], [3, "B"], [9, "z"]]


def test_up_restarts_only_what_is_down(cluster: Cluster):
    from floe.cluster.processes import stop_group

    env = child_env(FLOE_HOME=str(cluster.home))
    before = cluster.state()
    stop_group(ProcessRef.from_json(before["worker"]["process"]))
    out = run(["floe", "cluster", "up"], env).stdout
    assert "postgres  already running" in out and "master    already running" in out
    assert "worker    started" in out
    after = cluster.state()
    assert after["postgres"] == before["postgres"] and after["master"] == before["master"]
    assert after["worker"]["process"] != before["worker"]["process"]


def test_down_leaves_no_process_behind(cluster: Cluster):
    env = child_env(FLOE_HOME=str(cluster.home))
    state = cluster.state()
    refs = [ProcessRef.from_json(state[n]["process"]) for n in ("postgres", "master", "worker")]
    assert all(ref is not None and ref.alive() for ref in refs)
    assert processes_under(cluster.root), "the cluster's processes are found by this scan"

    out = run(["floe", "cluster", "down"], env).stdout
    assert "stopped: worker, master, postgres" in out
    assert not any(ref.alive() for ref in refs if ref is not None)
    assert processes_under(cluster.root) == []
    status = json.loads(run(["floe", "cluster", "status", "--json"], env).stdout)
    assert not any(s["running"] for s in status)
    assert "nothing was running" in run(["floe", "cluster", "down"], env).stdout
