"""Downstream watermarks follow commit order (the load sequence), not the ingest clock.

A raw batch whose ``_ingested_at`` is *older* than a batch the marts already applied
(a batch that started earlier but committed later, or a clock set back) must still
be applied: by ``fct_customer_purchases`` (append, ``_load_seq > max``) and by the
cdc model ``movies`` (``cdc_unapplied``). Under the old ``_ingested_at`` watermarks
both skipped it for good.
"""

from __future__ import annotations

import pytest

from floe.generator import GenerateOptions, generate
from tests.reliability.checksums import table_checksums

pytestmark = pytest.mark.integration

FEEDS = ["streams.customer_events", "streams.movies_cdc"]
SELECT = ["-s", "+fct_customer_purchases", "+movies"]


def test_a_batch_stamped_earlier_but_committed_later_is_applied(spark, lakehouse, dbt, monkeypatch):
    generate(GenerateOptions(landing=lakehouse.landing, days=1, scale=40), FEEDS)
    dbt(["run", *SELECT])
    applied = spark.sql("select max(_ingested_at) from marts.fct_customer_purchases").first()[0]
    assert applied is not None

    # Day 2 lands; its batch is stamped with a clock reading before the applied one.
    generate(GenerateOptions(landing=lakehouse.landing, days=2, scale=40), FEEDS)
    monkeypatch.setattr("floe.feeds.ledger.batch_time", lambda: "2000-01-01 00:00:00.000000")
    dbt(["run", *SELECT])

    late = spark.sql(
        "select count(*) from raw.customer_events where _ingested_at < timestamp '2001-01-01'"
    ).first()[0]
    assert late > 0, "the second batch was not stamped early: the test proves nothing"
    raw, mart, late_in_mart = spark.sql(
        "select (select count(*) from staging.stg_streams__customer_events), "
        "(select count(*) from marts.fct_customer_purchases), "
        "(select count(*) from marts.fct_customer_purchases "
        " where _ingested_at < timestamp '2001-01-01')"
    ).first()
    assert (mart, late_in_mart) == (raw, late)

    props = {r[0]: r[1] for r in spark.sql("show tblproperties marts.movies").collect()}
    assert props["floe.cdc.watermark_column"] == "_load_seq"
    assert props["floe.cdc.watermark"] == str(
        spark.sql("select max(_load_seq) from raw.movies_cdc").first()[0]
    )
    incremental = table_checksums(spark, ["marts.movies"])
    dbt(["run", "-s", "movies", "--full-refresh"])
    assert table_checksums(spark, ["marts.movies"]) == incremental
