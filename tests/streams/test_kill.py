"""``floe consume`` killed (SIGKILL) at random moments, then restarted: exactly once.

The final raw table must hold every produced record once — the same rows an
uninterrupted run lands (checksums over the broker coordinates and the payload's
key) — with every segment reconciled. A short run in the normal suite; ten kills per
source kind in ``make chaos`` (FLOE_CHAOS_STREAM_KILLS=10; ``make test`` kills one).
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.streams.conftest import (
    create_stream,
    create_topic,
    produce_kafka,
    put_kinesis,
)
from tests.streams.helpers import (
    bus_project,
    kafka_feed,
    kinesis_feed,
    rides,
    table_checksum,
    vitals,
)

pytestmark = [pytest.mark.integration, pytest.mark.chaos]
KILLS = int(os.environ.get("FLOE_CHAOS_STREAM_KILLS") or 1)

FLOE = Path(sys.executable).parent / "floe"


def _consume(env: dict[str, str], feed: str, log: Path) -> subprocess.Popen:
    out = open(log, "a")  # noqa: SIM115 - closed with the process
    return subprocess.Popen(
        [
            str(FLOE),
            "consume",
            feed,
            "--until-idle",
            "--max-records",
            "40",
            "--window-seconds",
            "0",
        ],
        env=env,
        stdout=out,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def _kill_runs(env: dict[str, str], feed: str, kills: int, log: Path, seed: int) -> int:
    """Start, let 0-1 batches commit, SIGKILL at a random moment after; ``kills`` times.

    Waiting for committed batches (the ``batch`` lines) rather than seconds puts the
    kills inside the consumption whatever the machine's load.
    """
    rng = random.Random(seed)
    killed = 0
    for _ in range(kills):
        before = len(log.read_text()) if log.exists() else 0
        proc = _consume(env, feed, log)
        wanted = rng.randint(0, 1)
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and proc.poll() is None:
            out = log.read_text()[before:]
            if "floe consume:" in out and out.count("\nbatch ") >= wanted:
                break
            time.sleep(0.2)
        time.sleep(rng.uniform(0.0, 6.0))
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            killed += 1
        proc.wait()
    return killed


def _finish(env: dict[str, str], feed: str, log: Path) -> None:
    proc = _consume(env, feed, log)
    assert proc.wait(timeout=900) == 0, log.read_text()[-3000:]


def _scenario(spark, lakehouse, bus_env, tmp_path, kills: int) -> None:  # type: ignore[no-untyped-def]
    from floe.feeds.ingest import reconcile_or_raise
    from floe.runtime import use_settings

    bootstrap = bus_env["FLOE_KAFKA_BOOTSTRAP_SERVERS"]
    endpoint = bus_env["FLOE_KINESIS_ENDPOINT"]
    topic, stream = create_topic(bootstrap), create_stream(endpoint, shards=2)
    n_rides, n_vitals = 150, 100
    produce_kafka(bootstrap, topic, rides(lakehouse.state_dir, n_rides, bad_every=25))
    put_kinesis(endpoint, stream, vitals(lakehouse.state_dir, n_vitals))
    project = bus_project(tmp_path, topic, stream)
    env = {
        **os.environ,
        **bus_env,
        "FLOE_HOME": str(lakehouse.home),
        "FLOE_PROJECT_DIR": str(project),
        "FLOE_SETTLE_SECONDS": "0",
        "FLOE_SPARK_CORES": "1",
        "FLOE_DRIVER_MEMORY": "1g",
    }
    log = tmp_path / "consume.log"
    killed = 0
    for feed, seed in (("rides", 1), ("vitals", 2)):
        killed += _kill_runs(env, feed, kills, log, seed)
        _finish(env, feed, log)
    assert killed >= 1, "no run was killed mid-way: the scenario proves nothing"
    use_settings(spark, lakehouse)  # the subprocesses committed: read fresh metadata
    spark.catalog.clearCache()

    # Kafka: each (partition, offset) once; good ones in raw, the rest quarantined
    expected_good = [(i % 3, i // 3, i) for i in range(n_rides) if i % 25 != 24]
    want = spark.createDataFrame(
        expected_good, "_topic_partition int, _offset bigint, ride_id bigint"
    )
    want.createOrReplaceTempView("want_rides")
    assert table_checksum(spark, "raw.rides", ["_topic_partition", "_offset", "ride_id"]) == (
        table_checksum(spark, "want_rides", ["_topic_partition", "_offset", "ride_id"])
    )
    bad = spark.sql(
        "select count(*), count(distinct _sequence_number) from raw.quarantine where feed = 'rides'"
    ).collect()[0]
    assert (bad[0], bad[1]) == (n_rides // 25, n_rides // 25)
    # Kinesis: every device once
    spark.createDataFrame(
        [(i,) for i in range(n_vitals)], "device_id bigint"
    ).createOrReplaceTempView("want_vitals")
    assert table_checksum(spark, "raw.vitals", ["device_id"]) == table_checksum(
        spark, "want_vitals", ["device_id"]
    )
    for feed in (kafka_feed(topic), kinesis_feed(stream)):
        assert reconcile_or_raise(spark, feed, always=True) == 0


def test_killed_consumers_resume_exactly_once(spark, lakehouse, bus_env, tmp_path):
    _scenario(spark, lakehouse, bus_env, tmp_path, kills=KILLS)
