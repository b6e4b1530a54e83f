"""Positions survive a catalog migration from SQLite to PostgreSQL (a real loopback server).

Half of a topic and of a stream is consumed through the SQLite catalog, the catalog
is migrated (``floe.runtime.catalog_migration``, what ``floe catalog migrate`` runs) to
PostgreSQL, more records are produced, and ``floe consume`` — a child process whose
settings name only the PostgreSQL catalog — resumes: every record once, none lost
(docs/streams.md, "Positions and exactly-once").
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import loopback_postgres
from tests.streams.conftest import create_stream, create_topic, produce_kafka, put_kinesis
from tests.streams.helpers import (
    bus_project,
    kafka_feed,
    kinesis_feed,
    rides,
    vitals,
    with_brokers,
)

pytestmark = pytest.mark.integration

FLOE = Path(sys.executable).parent / "floe"


@pytest.fixture(scope="module")
def postgres() -> Iterator[tuple[str, str, str]]:
    """(JDBC URI, user, password) of a loopback PostgreSQL with an empty database."""
    with loopback_postgres("floe-stream-migration-") as pg:
        yield pg.uri, pg.user, pg.password


def _rows(catalog, table: str, columns: list[str]) -> list[tuple]:  # type: ignore[no-untyped-def]
    arrow = catalog.load_table(tuple(table.split("."))).scan(selected_fields=tuple(columns))
    return [tuple(r[c] for c in columns) for r in arrow.to_arrow().to_pylist()]


def test_consume_resumes_exactly_once_through_a_postgresql_catalog(
    spark, lakehouse, bus_env, tmp_path, postgres
):
    from floe.runtime.catalog import CatalogDatabase, open_catalog_at
    from floe.runtime.catalog_migration import migrate_catalog
    from floe.streaming.bus import BusJob

    settings = with_brokers(lakehouse, bus_env)
    bootstrap = bus_env["FLOE_KAFKA_BOOTSTRAP_SERVERS"]
    endpoint = bus_env["FLOE_KINESIS_ENDPOINT"]
    topic, stream = create_topic(bootstrap), create_stream(endpoint, shards=2)
    produce_kafka(bootstrap, topic, rides(settings.state_dir, 30, bad_every=10))
    put_kinesis(endpoint, stream, vitals(settings.state_dir, 20))
    project = bus_project(tmp_path, topic, stream)
    feeds = [kafka_feed(topic), kinesis_feed(stream)]
    BusJob(spark, settings, project, feeds, window_seconds=0).run(until_idle=True)
    assert spark.table("raw.rides").count() == 27
    assert spark.table("raw.vitals").count() == 20

    uri, user, password = postgres
    target = CatalogDatabase(uri, user, password)
    report = migrate_catalog(
        CatalogDatabase(settings.catalog_uri), target, warehouse=settings.warehouse
    )
    assert {"raw.rides", "raw.vitals", "raw.landed_files"} <= set(report.copied)

    # 30 more rides (ride_id 30..59), 25 more vitals (device_id 20..44)
    more_rides = rides(settings.state_dir, 60, bad_every=10)[30:]
    produce_kafka(bootstrap, topic, more_rides)
    put_kinesis(endpoint, stream, vitals(settings.state_dir, 45)[20:])
    env = {
        **os.environ,
        **bus_env,
        "FLOE_HOME": str(settings.home),
        "FLOE_WAREHOUSE": settings.warehouse,
        "FLOE_LANDING": str(settings.landing),
        "FLOE_CATALOG_URI": uri,
        "FLOE_CATALOG_USER": user,
        "FLOE_CATALOG_PASSWORD": password,
        "FLOE_PROJECT_DIR": str(project),
        "FLOE_SETTLE_SECONDS": "0",
        "FLOE_SPARK_CORES": "1",
        "FLOE_DRIVER_MEMORY": "1g",
    }
    for _ in range(2):  # the second run finds nothing new: re-running changes nothing
        done = subprocess.run(
            [str(FLOE), "consume", "--until-idle", "--window-seconds", "0"],
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]

    migrated = open_catalog_at(target, settings.warehouse)
    got_rides = _rows(migrated, "raw.rides", ["_topic_partition", "_offset", "ride_id"])
    want_rides = [(i % 3, i // 3, i) for i in range(60) if i % 10 != 9]
    assert [k for k, n in Counter(got_rides).items() if n > 1] == []  # no duplicate
    assert sorted(got_rides) == sorted(want_rides)  # none lost, nothing else
    bad = _rows(migrated, "raw.quarantine", ["feed", "_sequence_number"])
    assert sorted(s for f, s in bad if f == "rides") == sorted(
        f"{i % 3:05d}:{i // 3:020d}" for i in range(60) if i % 10 == 9
    )
    got_vitals = [r[0] for r in _rows(migrated, "raw.vitals", ["device_id"])]
    assert sorted(got_vitals) == list(range(45))  # each device once
    gaps = _rows(migrated, "raw.stream_gaps", ["feed"])
    assert gaps == []
