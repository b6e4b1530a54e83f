"""``floe stream`` runs the broker feeds too (the continuous mode for every kind).

A project whose only feeds are a Kafka topic and a Kinesis stream: ``floe stream
--available-now`` consumes both exactly once and stops when the brokers are caught up;
a second run reads nothing. (``floe consume`` is the broker-only form.) The run is an
OpenLineage run of its own (docs/lineage.md): START, then COMPLETE naming the two raw
tables it committed to with their row counts, valid against the OpenLineage schemas.
"""

from __future__ import annotations

import json
import shutil
import signal
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from tests.openlineage.test_openlineage import (
    _config,
    _no_openlineage_env,
    _validators,
    validate,
)
from tests.streams.conftest import (
    FIXTURE_PROJECT,
    create_stream,
    create_topic,
    produce_kafka,
    put_kinesis,
)
from tests.streams.helpers import rides, vitals

pytestmark = pytest.mark.integration


def _project(tmp_path: Path, topic: str, stream: str) -> Path:
    project = tmp_path / "project"
    shutil.copytree(FIXTURE_PROJECT, project)
    sources = project / "python_models/raw/bus/_bus__sources.yml"
    doc = yaml.safe_load(sources.read_text())
    tables = [t for t in doc["sources"][0]["tables"] if t["name"] in ("rides", "vitals")]
    for table in tables:
        floe = table["config"]["meta"]["floe"]
        floe["topic" if floe["kind"] == "kafka" else "stream"] = (
            topic if floe["kind"] == "kafka" else stream
        )
        floe["max_records"] = 20
    doc["sources"][0]["tables"] = tables
    sources.write_text(yaml.safe_dump(doc, sort_keys=False))
    return project


def test_floe_stream_consumes_the_broker_feeds(spark, lakehouse, bus_env, tmp_path, monkeypatch):
    from floe.cli import main

    bootstrap, endpoint = bus_env["FLOE_KAFKA_BOOTSTRAP_SERVERS"], bus_env["FLOE_KINESIS_ENDPOINT"]
    topic, stream = create_topic(bootstrap), create_stream(endpoint, shards=2)
    produce_kafka(bootstrap, topic, rides(lakehouse.state_dir, 45))
    put_kinesis(endpoint, stream, vitals(lakehouse.state_dir, 30))
    monkeypatch.setenv("FLOE_PROJECT_DIR", str(_project(tmp_path, topic, stream)))
    _no_openlineage_env(monkeypatch, tmp_path)
    log = tmp_path / "events.jsonl"
    transport = {"type": "file", "log_file_path": str(log), "append": True}
    monkeypatch.setenv("OPENLINEAGE_CONFIG", str(_config(tmp_path, "file", transport)))
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        runner = CliRunner()
        out = runner.invoke(main, ["stream", "--available-now", "--window", "1 second"])
        assert out.exit_code == 0, out.output
        assert "floe stream: rides, vitals" in out.output
        assert spark.table("raw.rides").count() == 45
        assert spark.table("raw.vitals").count() == 30
        assert (
            spark.table("raw.rides").select("_topic_partition", "_offset").distinct().count() == 45
        )
        events = [json.loads(line) for line in log.read_text().splitlines()]
        validators = _validators()
        for event in events:
            validate(event, validators)
        assert [(e["job"]["name"], e["eventType"]) for e in events] == [
            ("floe.stream", "START"),
            ("floe.stream", "COMPLETE"),
        ]
        outputs = {d["name"]: d for d in events[1]["outputs"]}
        assert {"raw.rides", "raw.vitals"} <= set(outputs)
        assert outputs["raw.rides"]["outputFacets"]["outputStatistics"]["rowCount"] == 45
        assert outputs["raw.vitals"]["outputFacets"]["outputStatistics"]["rowCount"] == 30
        again = runner.invoke(main, ["stream", "--available-now"])
        assert again.exit_code == 0, again.output
        assert "0 broker batch(es), 0 record(s)" in again.output
        assert spark.table("raw.rides").count() == 45
        bad = runner.invoke(main, ["stream", "--window", "soon"])
        assert bad.exit_code != 0 and "'100 seconds'" in bad.output
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
