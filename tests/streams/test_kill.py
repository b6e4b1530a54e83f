"""``floe consume`` killed (SIGKILL) at random moments, then restarted: exactly once.

The final raw table must hold every produced record once — the same rows an
uninterrupted run lands (checksums over the broker coordinates and the payload's
key) — with every segment reconciled. A short run in the normal suite; ten kills per
source kind in ``make chaos`` (FLOE_CHAOS_STREAM_KILLS=10; ``make test`` kills one).
Each kind is its own test and prints ``chaos <kind>: kills=… checksums_equal=…
duplicates=… lost=… gaps=… wall=…`` (``make chaos`` runs pytest with ``-s``).
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


def _consume(env: dict[str, str], feed: str, log: Path, batch: int) -> subprocess.Popen:
    out = open(log, "a")  # noqa: SIM115 - closed with the process
    return subprocess.Popen(
        [
            str(FLOE),
            "consume",
            feed,
            "--until-idle",
            "--max-records",
            str(batch),
            "--window-seconds",
            "0",
        ],
        env=env,
        stdout=out,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def _kill_runs(env: dict[str, str], feed: str, kills: int, log: Path, seed: int, batch: int) -> int:
    """Start, let 0-1 batches commit, SIGKILL at a random moment after; ``kills`` times.

    Waiting for committed batches (the ``batch`` lines) rather than seconds puts the
    kills inside the consumption whatever the machine's load.
    """
    rng = random.Random(seed)
    killed = attempts = 0
    while killed < kills and attempts < 2 * kills:  # a run may finish before its kill
        attempts += 1
        before = len(log.read_text()) if log.exists() else 0
        proc = _consume(env, feed, log, batch)
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


def _finish(env: dict[str, str], feed: str, log: Path, batch: int) -> None:
    proc = _consume(env, feed, log, batch)
    assert proc.wait(timeout=900) == 0, log.read_text()[-3000:]


def _kind_env(lakehouse, bus_env, project: Path) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {
        **os.environ,
        **bus_env,
        "FLOE_HOME": str(lakehouse.home),
        "FLOE_PROJECT_DIR": str(project),
        "FLOE_SETTLE_SECONDS": "0",
        "FLOE_SPARK_CORES": "1",
        "FLOE_DRIVER_MEMORY": "1g",
    }


def _tally(spark, table: str, want: str, columns: list[str]) -> dict[str, object]:  # type: ignore[no-untyped-def]
    """Checksums of ``table`` and the uninterrupted run's rows ``want`` (a view), and
    the duplicates and lost keys between them."""
    keys = ", ".join(columns)
    got = table_checksum(spark, table, columns)
    expected = table_checksum(spark, want, columns)
    lost = spark.sql(
        f"select count(*) from (select {keys} from {want} except select {keys} from {table})"
    ).collect()[0][0]
    return {
        "checksums_equal": got == expected,
        "duplicates": got[0] - got[1],
        "lost": int(lost),
        "got": got,
        "expected": expected,
    }


def _scenario(spark, lakehouse, bus_env, tmp_path, kind: str, kills: int) -> None:  # type: ignore[no-untyped-def]
    """``kills`` SIGKILLed ``floe consume`` runs of one source kind, then one to the end;
    the raw table must equal what an uninterrupted run lands (by checksum)."""
    from floe.feeds.ingest import reconcile_or_raise
    from floe.runtime import use_settings

    bootstrap = bus_env["FLOE_KAFKA_BOOTSTRAP_SERVERS"]
    endpoint = bus_env["FLOE_KINESIS_ENDPOINT"]
    topic, stream = create_topic(bootstrap), create_stream(endpoint, shards=2)
    # the long run: enough batches (30 and 20 of 10) that every run is killed while
    # records are left; the short one: one kill, a few batches
    n_rides, n_vitals, batch = (300, 200, 10) if kills > 1 else (150, 100, 40)
    if kind == "kafka":
        produce_kafka(bootstrap, topic, rides(lakehouse.state_dir, n_rides, bad_every=25))
        feed, seed = kafka_feed(topic), 1
    else:
        put_kinesis(endpoint, stream, vitals(lakehouse.state_dir, n_vitals))
        feed, seed = kinesis_feed(stream), 2
    env = _kind_env(lakehouse, bus_env, bus_project(tmp_path, topic, stream))
    log = tmp_path / "consume.log"
    killed = _kill_runs(env, feed.name, kills, log, seed, batch)
    _finish(env, feed.name, log, batch)
    assert killed >= 1, "no run was killed mid-way: the scenario proves nothing"
    use_settings(spark, lakehouse)  # the subprocesses committed: read fresh metadata
    spark.catalog.clearCache()

    if kind == "kafka":
        # each (partition, offset) once; good ones in raw, the rest quarantined
        expected_good = [(i % 3, i // 3, i) for i in range(n_rides) if i % 25 != 24]
        spark.createDataFrame(
            expected_good, "_topic_partition int, _offset bigint, ride_id bigint"
        ).createOrReplaceTempView("want_rides")
        tally = _tally(spark, "raw.rides", "want_rides", ["_topic_partition", "_offset", "ride_id"])
        bad = spark.sql(
            "select count(*), count(distinct _sequence_number) from raw.quarantine "
            "where feed = 'rides'"
        ).collect()[0]
        assert (bad[0], bad[1]) == (n_rides // 25, n_rides // 25)
    else:
        # every device once
        spark.createDataFrame(
            [(i,) for i in range(n_vitals)], "device_id bigint"
        ).createOrReplaceTempView("want_vitals")
        tally = _tally(spark, "raw.vitals", "want_vitals", ["device_id"])
    from pyspark.sql import functions as F

    gaps = spark.table("raw.stream_gaps").where(F.col("feed") == feed.name).count()
    print(  # the chaos report: make chaos runs with -s
        f"\nchaos {kind}: kills={killed} checksums_equal={tally['checksums_equal']} "
        f"duplicates={tally['duplicates']} lost={tally['lost']} "
        f"gaps={gaps}"
    )
    assert tally["checksums_equal"], tally
    assert (tally["duplicates"], tally["lost"]) == (0, 0), tally
    assert reconcile_or_raise(spark, feed, always=True) == 0


@pytest.mark.parametrize("kind", ["kafka", "kinesis"])
def test_killed_consumers_resume_exactly_once(spark, lakehouse, bus_env, tmp_path, kind):
    _scenario(spark, lakehouse, bus_env, tmp_path, kind, kills=KILLS)
