"""Feed kind stream end to end through `dbt build`: decode, quarantine, reconciliation,
exactly once (re-run and simulated crash), weather v1/v2, movies CDC merge, orders
enrichment at day boundaries, and decode running in executors (mapInArrow).
"""

from __future__ import annotations

from collections import Counter
from datetime import date

import pytest

from floe.generator import GenerateOptions, generate
from floe.generator.demo.reference import priority_history
from tests.helpers import ROOT, current_snapshot, feed, feeds_of, landed_lines

pytestmark = pytest.mark.integration

SELECT = [
    "path:python_models/raw/streams",
    "path:python_models/raw/reference",
    "path:models/staging/streams",
    "path:models/staging/reference",
    "path:models/intermediate/reference",
    "path:models/marts/streams",
]
STREAMS = [f.name for f in feeds_of("stream")]
SIDE_TABLES = ["raw.quarantine", "raw.landed_files"]
RAW_TABLES = [f"raw.{s}" for s in STREAMS] + ["raw.product_priority"]
_snapshot = current_snapshot


def bad_classes() -> dict[str, tuple[str, ...]]:
    """Failure classes the demo data of each stream feed carries."""
    from floe.feeds.kinds import stream
    from floe.generator.writers import bad_classes as demo_bad_classes
    from floe.generator.writers import demo_maker

    out = {}
    for f in feeds_of("stream"):
        data_format, _ = stream.latest_schema(f, ROOT)
        out[f.name] = demo_bad_classes(data_format, demo_maker(f)(f, None))
    return out


def _lines(landing, name):
    return landed_lines(landing, feed(name).landing)


def test_streams_build_end_to_end(spark, lakehouse, dbt):
    from floe.feeds.ingest import ingest

    opts = GenerateOptions(landing=lakehouse.landing, days=2, scale=240, bad_share=0.02)
    generate(opts, ["streams", "reference"])

    # A crash after the side tables were written but before raw.orders was
    # committed: the build must re-decode those files and replace their rows.
    result = ingest(spark, feed("orders"), raw_exists=False, settings=lakehouse, project_dir=ROOT)
    assert result.counts and not spark.catalog.tableExists("raw.orders")

    dbt(["build", "-s", *SELECT])

    # -- every failure class, per stream, with its code
    found = {
        (r[0], r[1])
        for r in spark.sql("select distinct feed, error_code from raw.quarantine").collect()
    }
    for stream, classes in bad_classes().items():
        for code in classes:
            assert (stream, code) in found, (stream, code)
    assert (
        spark.sql(
            "select count(*) from raw.quarantine where raw_data is null or error_detail is null"
        ).first()[0]
        == 0
    )

    # -- reconciliation: lines in the landed files = raw + quarantine, per file
    for stream in STREAMS:
        landed = _lines(lakehouse.landing, stream)
        raw = Counter(r[0] for r in spark.sql(f"select _source_file from raw.{stream}").collect())
        bad = Counter(
            r[0]
            for r in spark.sql(
                f"select _source_file from raw.quarantine where feed = '{stream}'"
            ).collect()
        )
        assert {f: raw[f] + bad[f] for f in landed} == landed, stream
        assert sum(raw.values()) > 0.9 * sum(landed.values())
    # the crash replay left exactly one manifest row per file
    assert spark.sql(
        "select count(*), count(distinct _source_file) from raw.landed_files "
        "where feed <> 'product_priority'"
    ).first() == (
        sum(len(_lines(lakehouse.landing, s)) for s in STREAMS),
        sum(len(_lines(lakehouse.landing, s)) for s in STREAMS),
    )

    # -- typed ventilator; weather across v1 and v2
    vent = spark.table("marts.ventilator_metrics")
    assert dict(vent.dtypes)["eventtime"] == "timestamp"
    assert dict(vent.dtypes)["o2stats"] == "bigint"
    weather = {
        r[0]: (r[1], r[2])
        for r in spark.sql(
            "select schema_version, count(*), count(country) from marts.weather_reports "
            "group by schema_version"
        ).collect()
    }
    assert weather[1][0] > 0 and weather[1][1] == 0  # v1: country NULL
    assert weather[2][0] > 0 and weather[2][1] == weather[2][0]  # v2: country set

    # -- movies: the merge equals a replay of the decoded changes
    changes = spark.sql(
        "select movie_id, title, release_year, COUNTRY, __op, __source_ts_ms, "
        "cast(_sequence_number as decimal(38, 0)) as seq from raw.movies_cdc"
    ).collect()
    latest = {}
    for row in sorted(changes, key=lambda r: (r["__source_ts_ms"], r["seq"])):
        latest[row["movie_id"]] = row
    expected = {
        (r["movie_id"], r["title"], r["release_year"], r["COUNTRY"])
        for r in latest.values()
        if r["__op"] != "d"
    }
    actual = {
        tuple(r)
        for r in spark.sql(
            "select movie_id, title, release_year, country from marts.movies"
        ).collect()
    }
    assert actual == expected
    # v2's COUNTRY reached the table, merged over v1-written rows
    assert any(r[3] is not None for r in actual)
    versions = {
        r[0] for r in spark.sql("select distinct _schema_version from raw.movies_cdc").collect()
    }
    assert versions == {1, 2}

    # -- orders: the priority valid on the order's arrival day (generator truth)
    history = priority_history(opts)

    def truth(item: str, day: date) -> str:
        return [p for d, p in history if d <= day][-1][item]

    orders = spark.sql("select item, arrival_ts, priority from marts.fct_orders").collect()
    assert orders
    assert all(r["priority"] == truth(r["item"], r["arrival_ts"].date()) for r in orders)
    burger_days = {(r["arrival_ts"].date(), r["priority"]) for r in orders if r["item"] == "burger"}
    assert len({p for _, p in burger_days}) == 2  # changed at the day boundary
    parts = spark.sql("select partition from marts.fct_orders.partitions").collect()
    assert parts and set(parts[0][0].asDict()) == {"item", "priority"}

    # -- customer purchases mart is merge-on-read
    props = {
        r[0]: r[1] for r in spark.sql("show tblproperties marts.fct_customer_purchases").collect()
    }
    assert props.get("write.delete.mode") == "merge-on-read"

    # -- re-run with nothing new commits nothing
    before = {t: _snapshot(spark, t) for t in RAW_TABLES + SIDE_TABLES}
    dbt(["build", "-s", *SELECT])
    assert {t: _snapshot(spark, t) for t in RAW_TABLES + SIDE_TABLES} == before
