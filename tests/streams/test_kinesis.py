"""Kinesis streams (moto_server on loopback) consumed exactly once, shards followed."""

from __future__ import annotations

import pytest

from tests.streams.conftest import (
    FIXTURE_PROJECT,
    create_stream,
    kinesis_client,
    put_kinesis,
)
from tests.streams.helpers import kinesis_feed, table_checksum, vitals, with_brokers

pytestmark = pytest.mark.integration


def _run(spark, settings, feed, **kw):  # type: ignore[no-untyped-def]
    from floe.streaming.bus import BusJob

    job = BusJob(spark, settings, FIXTURE_PROJECT, [feed], window_seconds=0, **kw)
    job.run(until_idle=True)
    return job


def test_a_stream_lands_once_and_follows_a_split_shard(spark, lakehouse, bus_env):
    settings = with_brokers(lakehouse, bus_env)
    endpoint = bus_env["FLOE_KINESIS_ENDPOINT"]
    name = create_stream(endpoint, shards=2)
    put_kinesis(endpoint, name, vitals(settings.state_dir, 50))
    feed = kinesis_feed(name, max_records=30)
    job = _run(spark, settings, feed)
    assert sum(b.records_in for b in job.batches) == 50
    raw = spark.table("raw.vitals")
    assert raw.count() == 50
    assert raw.select("_sequence_number").distinct().count() == 50
    assert raw.where("_stream is null or _shard is null or _arrival_ts is null").count() == 0
    before = table_checksum(spark, "raw.vitals", ["_sequence_number", "device_id"])
    assert _run(spark, settings, feed).batches == []
    assert table_checksum(spark, "raw.vitals", ["_sequence_number", "device_id"]) == before

    # split a shard: its children are listed and read once it is drained (moto keeps
    # routing new records to the closed parent; AWS routes them to the children)
    client = kinesis_client(endpoint)
    shard = client.list_shards(StreamName=name)["Shards"][0]
    low = int(shard["HashKeyRange"]["StartingHashKey"])
    high = int(shard["HashKeyRange"]["EndingHashKey"])
    client.split_shard(
        StreamName=name, ShardToSplit=shard["ShardId"], NewStartingHashKey=str((low + high) // 2)
    )
    put_kinesis(endpoint, name, vitals(settings.state_dir, 40))
    _run(spark, settings, feed)
    raw = spark.table("raw.vitals")
    assert raw.count() == 90
    assert raw.select("_sequence_number").distinct().count() == 90
    assert len(kinesis_client(endpoint).list_shards(StreamName=name)["Shards"]) == 4
    assert _run(spark, settings, feed).batches == []  # children read, nothing more


def test_latest_starts_at_the_first_batch_time(spark, lakehouse, bus_env):
    settings = with_brokers(lakehouse, bus_env)
    endpoint = bus_env["FLOE_KINESIS_ENDPOINT"]
    name = create_stream(endpoint, shards=1)
    put_kinesis(endpoint, name, vitals(settings.state_dir, 20))
    feed = kinesis_feed(name, starting_position="latest")
    _run(spark, settings, feed)
    import time

    time.sleep(1.1)  # arrival times are kept to the millisecond; start marker is before these
    put_kinesis(endpoint, name, vitals(settings.state_dir, 7))
    _run(spark, settings, feed)
    assert spark.table("raw.vitals").count() == 7
