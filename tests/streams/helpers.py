"""Shared pieces of the stream tests: fixture feeds, framed records, table checksums."""

from __future__ import annotations

import dataclasses
import random
import shutil
from pathlib import Path
from typing import Any

import yaml

from tests.streams.conftest import FIXTURE_PROJECT


def kafka_feed(topic: str, **options: Any) -> Any:
    from floe.feeds.sources import make_feed

    meta = {"kind": "kafka", "topic": topic, "registry_schema": "rides", **options}
    return make_feed("bus", "rides", {}, meta)


def kinesis_feed(stream: str, **options: Any) -> Any:
    from floe.feeds.sources import make_feed

    meta = {"kind": "kinesis", "stream": stream, "registry_schema": "vitals", **options}
    return make_feed("bus", "vitals", {}, meta)


def bus_project(tmp_path: Path, topic: str, stream: str) -> Path:
    """A copy of the fixture project whose kafka feed reads ``topic`` and whose kinesis
    feed reads ``stream`` (for ``floe consume`` run as a child process)."""
    project = tmp_path / "project"
    shutil.copytree(FIXTURE_PROJECT, project)
    sources = project / "python_models/raw/bus/_bus__sources.yml"
    doc = yaml.safe_load(sources.read_text())
    for table in doc["sources"][0]["tables"]:
        floe = table["config"]["meta"]["floe"]
        if floe["kind"] == "kafka":
            floe["topic"] = topic
        else:
            floe["stream"] = stream
    sources.write_text(yaml.safe_dump(doc, sort_keys=False))
    return project


def with_brokers(settings: Any, env: dict[str, str]) -> Any:
    return dataclasses.replace(
        settings,
        kafka_bootstrap_servers=env["FLOE_KAFKA_BOOTSTRAP_SERVERS"],
        kinesis_endpoint=env["FLOE_KINESIS_ENDPOINT"],
    )


def versions(state_dir: Path, schema: str) -> list[Any]:
    from floe.feeds.kinds.stream import schemas_dir, sync_local_registry

    return sync_local_registry(state_dir, schemas_dir(FIXTURE_PROJECT)).versions(schema, "floe")


def rides(state_dir: Path, n: int, bad_every: int = 0, seed: int = 7) -> list[bytes]:
    """``n`` Glue-framed Avro rides; every ``bad_every``-th one Confluent-framed with an
    id no registry maps (an ``unknown_schema`` quarantine)."""
    from floe.registry import codec, wire

    version = versions(state_dir, "rides")[-1]
    rng = random.Random(seed)
    out = []
    for i in range(n):
        record = {"ride_id": i, "city": rng.choice(["Oslo", "Lima", "Pune"]), "fare": i / 4}
        if bad_every and i % bad_every == bad_every - 1:
            out.append(wire.encode_confluent(codec.encode_payload(record, version), 4242))
        else:
            out.append(codec.frame(record, version))
    return out


def vitals(state_dir: Path, n: int) -> list[bytes]:
    from floe.registry import codec

    version = versions(state_dir, "vitals")[-1]
    return [codec.frame({"device_id": i, "pressure": i * 0.5}, version) for i in range(n)]


def table_checksum(spark: Any, table: str, columns: list[str]) -> tuple[int, int, str]:
    """(rows, distinct keys, order-free content hash) of ``columns`` of ``table``."""
    from pyspark.sql import functions as F

    df = spark.table(table).select(*columns)
    row = df.agg(
        F.count(F.lit(1)),
        F.countDistinct(*columns),
        F.sum(F.xxhash64(*columns).cast("decimal(38,0)")).cast("string"),
    ).collect()[0]
    return int(row[0]), int(row[1]), str(row[2])
