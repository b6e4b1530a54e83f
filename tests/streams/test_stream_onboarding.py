"""Onboarding a Kafka topic and a Kinesis stream is YAML + schema, no Python under src/.

A copy of the project gets, from ``fixtures/project``: three registry schemas (Avro,
JSON Schema, Protobuf), a sources YAML declaring two ``kind: kafka`` feeds (one of
Protobuf records) and a ``kind: kinesis`` feed, and their two-line raw models. ``floe produce`` (the user's producer) frames JSON records onto
the topic and the stream; ``dbt build`` of the two raw models lands them exactly once.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.helpers import ROOT, copy_project
from tests.streams.conftest import FIXTURE_PROJECT, kinesis_client

pytestmark = pytest.mark.integration


def _project(target: Path) -> Path:
    return copy_project(target, FIXTURE_PROJECT, parts=["schemas", "python_models"])


def test_a_topic_and_a_stream_need_only_yaml_and_a_schema(
    spark, lakehouse, bus_env, tmp_path, monkeypatch
):
    from kafka.admin import KafkaAdminClient, NewTopic

    from floe.cli import main
    from floe.dbt_runner import run_dbt
    from floe.feeds import find_feed, load_feeds
    from floe.runtime import use_settings

    project = _project(tmp_path / "project")
    monkeypatch.setenv("FLOE_PROJECT_DIR", str(project))
    # The edge names the project: the session's settings (the adapter's) and the CLI's env.
    use_settings(spark, dataclasses.replace(lakehouse, project_dir=project))
    feeds = load_feeds(project)
    assert find_feed(feeds, "rides").kind == "kafka"
    assert find_feed(feeds, "vitals").kind == "kinesis"

    admin = KafkaAdminClient(bootstrap_servers=bus_env["FLOE_KAFKA_BOOTSTRAP_SERVERS"])
    admin.create_topics([NewTopic("floe-rides", 2, 1), NewTopic("floe-trips", 2, 1)])
    admin.close()
    kinesis_client(bus_env["FLOE_KINESIS_ENDPOINT"]).create_stream(
        StreamName="floe-vitals", ShardCount=1
    )

    rides = "\n".join(
        json.dumps({"ride_id": i, "city": "Oslo", "fare": 1.5 * i}) for i in range(25)
    )
    vitals = "\n".join(json.dumps({"device_id": i, "pressure": 0.5}) for i in range(15))
    runner = CliRunner()
    out = runner.invoke(main, ["produce", "rides"], input=rides)
    assert out.exit_code == 0, out.output
    assert "25 record(s), schema version 1, to kafka topic floe-rides" in out.output
    out = runner.invoke(main, ["produce", "vitals"], input=vitals)
    assert out.exit_code == 0, out.output
    trips = "\n".join(
        json.dumps(
            {
                "trip_id": i,
                "city": "Lima",
                "kind": "PRIVATE",
                "start": {"lat": -12.0, "lon": -77.0},
                "started_at": "2026-03-01T10:00:00Z",
                "card": f"c{i}",
                "counters": {"stops": i},
            }
        )
        for i in range(6)
    )
    out = runner.invoke(main, ["produce", "trips"], input=trips)
    assert out.exit_code == 0, out.output
    assert "6 record(s), schema version 2" in out.output
    # a record that does not fit its schema is refused, naming it
    out = runner.invoke(main, ["produce", "vitals"], input='{"device_id": "x"}\n')
    assert out.exit_code != 0 and "record 1 does not fit vitals v1" in out.output

    for _ in range(2):  # the second build finds nothing new
        run = run_dbt(
            ["build", "-s", "raw_bus__rides", "raw_bus__vitals", "raw_bus__trips"],
            project=project,
            profiles_dir=ROOT / "profiles",
            target_path=tmp_path / "target",
            quiet=True,
        )
        assert run.success, run.failures or run.exception
        assert spark.table("raw.rides").count() == 25
        assert spark.table("raw.vitals").count() == 15
    assert spark.table("raw.rides").select("_topic").distinct().collect()[0][0] == "floe-rides"
    assert spark.table("raw.vitals").where("_shard is null").count() == 0
    trip = spark.sql(
        "select kind, start.lat as lat, card, cash, counters['stops'] as stops, "
        "cast(started_at as string) as started, rating from raw.trips where trip_id = 5"
    ).collect()
    assert [tuple(r) for r in trip] == [
        ("PRIVATE", -12.0, "c5", None, 5, "2026-03-01 10:00:00", 0.0)
    ]
    assert spark.table("raw.trips").count() == 6
