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

    # positions are rows: expiring every old snapshot (floe maintain) keeps them
    from floe.maintenance.core import expire_all_but_current

    for table in ("raw.rides", "raw.landed_files", "raw.quarantine"):
        expire_all_but_current(spark, table)
    assert spark.sql("select count(*) from raw.rides.snapshots").collect()[0][0] == 1

    # new records only
    produce_kafka(
        bus_env["FLOE_KAFKA_BOOTSTRAP_SERVERS"], topic, rides(settings.state_dir, 30, seed=8)
    )
    _job(spark, settings, feed).run(until_idle=True)
    assert spark.table("raw.rides").count() == 81 + 30
    assert spark.table("raw.rides").select("_topic_partition", "_offset").distinct().count() == 111


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
    from floe.feeds.kinds.kafka import KAFKA as kafka

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


def test_a_retention_gap_is_counted_and_skipped_past(spark, lakehouse, bus_env):
    """Offsets 0..9 expired before they were read (the broker's beginning offset is 10).

    Tansu cannot expire records (no retention, no DeleteRecords), so the broker's answer
    is the one stand-in: the real source's fetch with its beginning offsets raised.
    """
    import dataclasses

    from floe.feeds.consume import GapSummary, consume, gap_count
    from floe.feeds.kinds.kafka import KAFKA as kafka
    from floe.streams.kafka import KafkaSource

    settings = with_brokers(lakehouse, bus_env)
    bootstrap = bus_env["FLOE_KAFKA_BOOTSTRAP_SERVERS"]
    topic = create_topic(bootstrap, partitions=1)
    produce_kafka(bootstrap, topic, rides(settings.state_dir, 25), partitions=1)
    feed = kafka_feed(topic)

    class Retained(KafkaSource):
        def fetch(self, positions, starting_position, *, max_records, max_bytes):  # type: ignore[no-untyped-def]
            consumer = self.consumer()
            real = consumer.beginning_offsets
            consumer.beginning_offsets = lambda tps: {tp: 10 for tp in real(tps)}
            try:
                return super().fetch(
                    positions, starting_position, max_records=max_records, max_bytes=max_bytes
                )
            finally:
                consumer.beginning_offsets = real

    source = Retained(bootstrap, topic)
    bus = dataclasses.replace(
        kafka.bus(feed, settings),
        fetch=lambda p, s, r, b: source.fetch(p, s, max_records=r, max_bytes=b),
        positions=lambda keys: {"0": 0} if not list(keys) else kafka.positions(keys),
    )
    result = consume(
        spark, feed, bus, raw_exists=False, settings=settings, project_dir=FIXTURE_PROJECT
    )
    from floe.streaming.bus import append

    append(spark, feed.raw_table, result.rows)
    assert sorted(result.files) == [
        f"kafka://{topic}/0/10-25",
        f"kafka://{topic}/0/gap-10",
    ]
    assert spark.table("raw.rides").count() == 15
    assert gap_count(spark, feed) == GapSummary(gaps=1, missing=10, uncounted=0)
    gap = spark.table("raw.stream_gaps").collect()[0]
    assert (gap.first_missing, gap.last_missing, gap.missing) == ("0", "9", 10)


def test_partitions_added_later_are_read_from_their_start(spark, lakehouse, bus_env):
    """The feed starts at ``latest`` while the topic shows one partition; two more
    appear later (Tansu refuses CreatePartitions, so the topic has three from the start
    and the metadata answer hides two at first). The new ones are read from their
    earliest offset, the known one from its position: nothing produced is lost."""
    from floe.feeds.kinds.kafka import KAFKA

    settings = with_brokers(lakehouse, bus_env)
    bootstrap = bus_env["FLOE_KAFKA_BOOTSTRAP_SERVERS"]
    topic = create_topic(bootstrap, partitions=3)
    produce_kafka(bootstrap, topic, rides(settings.state_dir, 30))  # 10 a partition
    feed = kafka_feed(topic, starting_position="latest")
    source = KAFKA.source(feed, settings)  # the client the job uses (one per process)
    source.partitions = lambda: [0]  # type: ignore[method-assign]
    try:
        _job(spark, settings, feed).run(until_idle=True)
        marker = spark.sql("select _source_file from raw.landed_files").collect()
        assert [r[0] for r in marker] == [f"kafka://{topic}/0/start-10"]
        produce_kafka(bootstrap, topic, rides(settings.state_dir, 30, seed=9))
        del source.partitions  # the two new partitions show up
        _job(spark, settings, feed).run(until_idle=True)
    finally:
        source.close()  # type: ignore[attr-defined]
    raw = spark.table("raw.rides")
    got = sorted((r[0], r[1]) for r in raw.select("_topic_partition", "_offset").collect())
    assert got == sorted(
        [(0, o) for o in range(10, 20)] + [(p, o) for p in (1, 2) for o in range(20)]
    )


def test_positions_survive_a_catalog_migration(spark, lakehouse, bus_env, tmp_path):
    """``floe catalog migrate`` moves the catalog entries (SQLite to another database);
    the positions are rows of the migrated tables, so consuming through the new catalog
    resumes where the old one stopped: each offset once."""
    import dataclasses

    from floe.runtime.catalog import CatalogDatabase
    from floe.runtime.catalog_migration import migrate_catalog
    from tests.helpers import use_lakehouse

    settings = with_brokers(lakehouse, bus_env)
    bootstrap = bus_env["FLOE_KAFKA_BOOTSTRAP_SERVERS"]
    topic = create_topic(bootstrap)
    produce_kafka(bootstrap, topic, rides(settings.state_dir, 30, bad_every=10))
    feed = kafka_feed(topic)
    _job(spark, settings, feed).run(until_idle=True)
    assert spark.table("raw.rides").count() == 27

    target = f"jdbc:sqlite:{tmp_path / 'migrated.db'}?journal_mode=WAL&busy_timeout=30000"
    report = migrate_catalog(
        CatalogDatabase(settings.catalog_uri),
        CatalogDatabase(target),
        warehouse=settings.warehouse,
    )
    assert "raw.rides" in report.copied and "raw.landed_files" in report.copied
    moved = dataclasses.replace(settings, catalog_uri=target)
    use_lakehouse(spark, moved)
    produce_kafka(bootstrap, topic, rides(settings.state_dir, 15, seed=4))
    job = _job(spark, moved, feed)
    job.run(until_idle=True)
    assert sum(b.records_in for b in job.batches) == 15
    raw = spark.table("raw.rides")
    assert raw.count() == 27 + 15
    assert raw.select("_topic_partition", "_offset").distinct().count() == 42
    from floe.feeds.ingest import reconcile_or_raise

    assert reconcile_or_raise(spark, feed, always=True) == 0
