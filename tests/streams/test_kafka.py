"""Kafka topics consumed exactly once into raw.<feed> (a real broker on loopback)."""

from __future__ import annotations

import pytest

from tests.streams.conftest import FIXTURE_PROJECT, create_topic, produce_kafka
from tests.streams.helpers import kafka_feed, rides, table_checksum, with_brokers

pytestmark = pytest.mark.integration


def _job(spark, settings, feed, **kw):  # type: ignore[no-untyped-def]
    from floe.streaming.bus import BusJob

    return BusJob(spark, settings, FIXTURE_PROJECT, [feed], window_seconds=0, **kw)


def test_a_topic_lands_once_with_provenance_and_quarantine(spark, lakehouse, bus_env):
    settings = with_brokers(lakehouse, bus_env)
    topic = create_topic(bus_env["FLOE_KAFKA_BOOTSTRAP_SERVERS"])
    values = rides(settings.state_dir, 90, bad_every=10)
    produce_kafka(bus_env["FLOE_KAFKA_BOOTSTRAP_SERVERS"], topic, values)
    feed = kafka_feed(topic, max_records=40)

    job = _job(spark, settings, feed)
    job.run(until_idle=True)
    assert sum(b.records_in for b in job.batches) == 90
    assert len(job.batches) >= 3  # the cap of 40 records bounds each batch

    raw = spark.table("raw.rides")
    assert raw.count() == 81
    assert raw.select("_topic", "_topic_partition", "_offset").distinct().count() == 81
    offsets = {
        (r["_topic_partition"], r["_offset"])
        for r in raw.select("_topic_partition", "_offset").collect()
    }
    bad = spark.sql(
        "select error_code, error_detail, _sequence_number from raw.quarantine where feed = 'rides'"
    ).collect()
    assert len(bad) == 9
    assert {r.error_code for r in bad} == {"unknown_schema"}
    assert all("4242" in r.error_detail for r in bad)
    # every offset 0..29 of each partition is accounted for, once
    quarantined = {(int(r[2].split(":")[0]), int(r[2].split(":")[1])) for r in bad}
    assert offsets | quarantined == {(p, o) for p in range(3) for o in range(30)}
    assert raw.where("_arrival_ts is null").count() == 0
    assert raw.where("city is null or fare is null").count() == 0

    # re-running on the same topic changes nothing
    before = table_checksum(spark, "raw.rides", ["_topic_partition", "_offset", "ride_id"])
    again = _job(spark, settings, feed)
    again.run(until_idle=True)
    assert again.batches == []
    assert table_checksum(spark, "raw.rides", ["_topic_partition", "_offset", "ride_id"]) == before

    # new records only
    produce_kafka(
        bus_env["FLOE_KAFKA_BOOTSTRAP_SERVERS"], topic, rides(settings.state_dir, 30, seed=8)
    )
    _job(spark, settings, feed).run(until_idle=True)
    assert spark.table("raw.rides").count() == 81 + 30


def test_latest_starts_after_what_is_there_and_holds(spark, lakehouse, bus_env):
    settings = with_brokers(lakehouse, bus_env)
    bootstrap = bus_env["FLOE_KAFKA_BOOTSTRAP_SERVERS"]
    topic = create_topic(bootstrap)
    produce_kafka(bootstrap, topic, rides(settings.state_dir, 60))
    feed = kafka_feed(topic, starting_position="latest")
    _job(spark, settings, feed).run(until_idle=True)
    assert not spark.catalog.tableExists("raw.rides") or spark.table("raw.rides").count() == 0
    produce_kafka(bootstrap, topic, rides(settings.state_dir, 12, seed=3))
    _job(spark, settings, feed).run(until_idle=True)
    assert spark.table("raw.rides").count() == 12


def test_a_crash_before_the_raw_commit_reads_the_range_again(spark, lakehouse, bus_env):
    """Ledger rows written, raw rows not: the next batch forgets them and reads again."""
    from floe.feeds.kinds import kafka

    settings = with_brokers(lakehouse, bus_env)
    bootstrap = bus_env["FLOE_KAFKA_BOOTSTRAP_SERVERS"]
    topic = create_topic(bootstrap)
    produce_kafka(bootstrap, topic, rides(settings.state_dir, 30, bad_every=5))
    feed = kafka_feed(topic)
    lost = kafka.consume(
        spark, feed, raw_exists=False, settings=settings, project_dir=FIXTURE_PROJECT
    )
    assert len(lost.files) == 3  # one segment per partition; never appended (a crash)
    produce_kafka(bootstrap, topic, rides(settings.state_dir, 9, seed=5))
    _job(spark, settings, feed).run(until_idle=True)
    assert spark.table("raw.rides").count() == 24 + 9
    assert spark.sql("select * from raw.quarantine where feed = 'rides'").count() == 6
    from floe.feeds.ingest import reconcile_or_raise

    assert reconcile_or_raise(spark, feed, always=True) == 0
