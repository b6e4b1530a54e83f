"""Kinesis streams (moto_server on loopback) consumed exactly once, shards followed."""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F

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


def test_merged_shards_are_read_after_both_parents_are_drained(spark, lakehouse, bus_env):
    """The merged child names both parents (ParentShardId, AdjacentParentShardId) and
    is read only once both are drained. moto copies the parents' records into the
    merged child (AWS does not; it keeps routing new ones to the closed parents): the
    child's copies arrive with their own sequence numbers, so they land once more."""
    settings = with_brokers(lakehouse, bus_env)
    endpoint = bus_env["FLOE_KINESIS_ENDPOINT"]
    name = create_stream(endpoint, shards=2)
    put_kinesis(endpoint, name, vitals(settings.state_dir, 30))
    client = kinesis_client(endpoint)
    first, second = (s["ShardId"] for s in client.list_shards(StreamName=name)["Shards"])
    client.merge_shards(StreamName=name, ShardToMerge=first, AdjacentShardToMerge=second)
    child = next(
        s
        for s in client.list_shards(StreamName=name)["Shards"]
        if s.get("AdjacentParentShardId") == second
    )
    feed = kinesis_feed(name, max_records=8)
    job = _run(spark, settings, feed)
    assert len(job.batches) >= 8  # 60 records, 8 a batch
    raw = spark.table("raw.vitals")
    assert raw.count() == 60
    assert raw.select("_sequence_number").distinct().count() == 60
    seqs = {
        r._shard: (r.lo, r.hi)
        for r in raw.groupBy("_shard")
        .agg(F.min("_load_seq").alias("lo"), F.max("_load_seq").alias("hi"))
        .collect()
    }
    assert set(seqs) == {first, second, child["ShardId"]}
    # the child's first batch is the parents' last one or later (a batch may finish a
    # parent, find it drained, then start the child)
    assert seqs[child["ShardId"]][0] >= max(seqs[first][1], seqs[second][1])
    assert seqs[child["ShardId"]][0] > min(seqs[first][0], seqs[second][0])
    assert _run(spark, settings, feed).batches == []


class _Trimmed:
    """A Kinesis client whose shards lost every record up to ``horizon`` to retention.

    moto never trims (and a stream's retention is 24 h at least), so this stands in
    for the expiry alone; every call still goes to moto_server."""

    def __init__(self, client, horizon: int) -> None:  # type: ignore[no-untyped-def]
        self._client, self._horizon = client, horizon

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        return getattr(self._client, name)

    def get_records(self, **kwargs):  # type: ignore[no-untyped-def]
        page = self._client.get_records(**kwargs)
        kept = [r for r in page["Records"] if int(r["SequenceNumber"]) > self._horizon]
        return {**page, "Records": kept}


def test_a_retention_gap_is_recorded_and_read_past(spark, lakehouse, bus_env):
    """Records 11..20 expired unread: a raw.stream_gaps row names the range (count
    unknown: sequence numbers are not contiguous), reading goes on at 21, once."""
    from floe.feeds.consume import GAPS
    from floe.feeds.kinds.kinesis import KINESIS

    settings = with_brokers(lakehouse, bus_env)
    endpoint = bus_env["FLOE_KINESIS_ENDPOINT"]
    name = create_stream(endpoint, shards=1)
    shard = kinesis_client(endpoint).list_shards(StreamName=name)["Shards"][0]["ShardId"]
    put_kinesis(endpoint, name, vitals(settings.state_dir, 10))
    feed = kinesis_feed(name)
    _run(spark, settings, feed)
    assert spark.table("raw.vitals").count() == 10

    put_kinesis(endpoint, name, vitals(settings.state_dir, 20))  # sequence numbers 11..30
    source = KINESIS.source(feed, settings)  # the client the job uses (one per process)
    source._client = _Trimmed(source.client(), horizon=20)  # type: ignore[attr-defined]
    try:
        job = _run(spark, settings, feed)
        assert sum(b.records_in for b in job.batches) == 10
        raw = spark.table("raw.vitals")
        assert raw.count() == 20
        kept = sorted(int(r[0].split(":")[1]) for r in raw.select("_sequence_number").collect())
        assert kept == list(range(1, 11)) + list(range(21, 31))
        gaps = spark.table(GAPS).where("feed = 'vitals'").collect()
        assert [(g.partition, g.first_missing, g.last_missing, g.missing) for g in gaps] == [
            (shard, "11", "20", None)
        ]
        assert gaps[0]._source_file == f"kinesis://{name}/{shard}/gap-21"
        # read past: the next run finds its position (30) still there, no new gap
        assert _run(spark, settings, feed).batches == []
        assert spark.table(GAPS).where("feed = 'vitals'").count() == 1
    finally:
        source.close()  # type: ignore[attr-defined]


def _gaps(spark):  # type: ignore[no-untyped-def]
    from floe.feeds.consume import GAPS

    return [
        (g.partition, g.first_missing, g.last_missing, g.missing, g.reason, g._source_file)
        for g in spark.table(GAPS).where("feed = 'vitals'").orderBy("partition").collect()
    ]


def _by_shard(client, name: str) -> dict[str, int]:  # type: ignore[no-untyped-def]
    """Shard id -> its highest sequence number (0: empty)."""
    out: dict[str, int] = {}
    for shard in client.list_shards(StreamName=name)["Shards"]:
        it = client.get_shard_iterator(
            StreamName=name, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
        )["ShardIterator"]
        seqs = [int(r["SequenceNumber"]) for r in client.get_records(ShardIterator=it)["Records"]]
        out[shard["ShardId"]] = max(seqs, default=0)
    return out


def test_a_shard_gone_before_it_was_drained_is_a_gap_a_finished_one_is_not(
    spark, lakehouse, bus_env
):
    """AWS lists a closed shard until the retention period has passed, then drops it.
    A shard floe finished (closed, read to its end: an ``end`` marker) may go; one
    floe still held a position in went with unread records: a ``shard_gone`` gap,
    recorded once. moto never drops a shard, so the stream is deleted and created
    again with one shard: floe's position names a shard list_shards no longer returns.
    """
    settings = with_brokers(lakehouse, bus_env)
    endpoint = bus_env["FLOE_KINESIS_ENDPOINT"]
    client = kinesis_client(endpoint)
    name = create_stream(endpoint, shards=2)
    put_kinesis(endpoint, name, vitals(settings.state_dir, 30))
    first, second = (s["ShardId"] for s in client.list_shards(StreamName=name)["Shards"])
    shard = client.list_shards(StreamName=name)["Shards"][0]
    low = int(shard["HashKeyRange"]["StartingHashKey"])
    high = int(shard["HashKeyRange"]["EndingHashKey"])
    client.split_shard(
        StreamName=name, ShardToSplit=first, NewStartingHashKey=str((low + high) // 2)
    )
    last = _by_shard(client, name)
    feed = kinesis_feed(name, max_records=100)
    _run(spark, settings, feed)
    assert spark.table("raw.vitals").count() == 30
    markers = {r[0] for r in spark.sql("select _source_file from raw.landed_files").collect()}
    assert f"kinesis://{name}/{first}/end-{last[first]}" in markers  # closed and drained
    assert not any(f"/{second}/end-" in m for m in markers)  # open: not finished
    assert _gaps(spark) == []

    client.delete_stream(StreamName=name)
    client.create_stream(StreamName=name, ShardCount=1)  # lists shardId-000000000000 only
    job = _run(spark, settings, feed)
    assert sum(b.records_in for b in job.batches) == 0
    assert _gaps(spark) == [
        (
            second,
            str(last[second] + 1),
            None,
            None,
            "shard_gone",
            f"kinesis://{name}/{second}/end-{last[second]}",
        )
    ]
    assert _run(spark, settings, feed).batches == []  # recorded once: the shard is finished
    assert len(_gaps(spark)) == 1
    from floe.feeds.ingest import reconcile_or_raise

    assert reconcile_or_raise(spark, feed, always=True) == 0


def test_a_closed_shard_that_expired_whole_is_a_gap(spark, lakehouse, bus_env):
    """The shard was split (closed) after floe read 10 records; the 10 more it got,
    and the 10 floe read, expired before the next batch (retention): nothing is left
    to read and no record after floe's position will ever come. A ``shard_expired``
    gap names the range up to the shard's ending sequence number, once."""
    from floe.feeds.kinds.kinesis import KINESIS

    settings = with_brokers(lakehouse, bus_env)
    endpoint = bus_env["FLOE_KINESIS_ENDPOINT"]
    client = kinesis_client(endpoint)
    name = create_stream(endpoint, shards=1)
    shard = client.list_shards(StreamName=name)["Shards"][0]
    put_kinesis(endpoint, name, vitals(settings.state_dir, 10))
    feed = kinesis_feed(name)
    _run(spark, settings, feed)
    assert spark.table("raw.vitals").count() == 10

    put_kinesis(endpoint, name, vitals(settings.state_dir, 10))  # sequence numbers 11..20
    low = int(shard["HashKeyRange"]["StartingHashKey"])
    high = int(shard["HashKeyRange"]["EndingHashKey"])
    client.split_shard(
        StreamName=name, ShardToSplit=shard["ShardId"], NewStartingHashKey=str((low + high) // 2)
    )
    source = KINESIS.source(feed, settings)  # the client the job uses (one per process)
    source._client = _Trimmed(source.client(), horizon=20)  # type: ignore[attr-defined]
    try:
        assert sum(b.records_in for b in _run(spark, settings, feed).batches) == 0
        sid = shard["ShardId"]
        assert _gaps(spark) == [
            (sid, "11", "20", None, "shard_expired", f"kinesis://{name}/{sid}/end-10")
        ]
        assert _run(spark, settings, feed).batches == []
        assert len(_gaps(spark)) == 1
    finally:
        source.close()  # type: ignore[attr-defined]
    assert spark.table("raw.vitals").count() == 10
