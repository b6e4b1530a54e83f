"""`floe stream` (availableNow) writes what `dbt build` writes, resumes from its
checkpoint, and refreshes reference data only when the `_CHANGED` flag appears."""

from __future__ import annotations

import pytest

from floe.generator import GenerateOptions
from floe.generator.streams import STREAM_SCHEMAS, generate

pytestmark = pytest.mark.integration

RAW = [f"raw.{s}" for s in STREAM_SCHEMAS]


def _rows(spark, table, drop=("_ingested_at",)):
    df = spark.table(table)
    df = df.drop(*drop)
    return sorted(tuple(r) for r in df.collect())


def _snapshot(spark, table):
    rows = spark.sql(
        f"select snapshot_id from {table}.snapshots order by committed_at desc limit 1"
    ).collect()
    return rows[0][0] if rows else None


def _run(spark, settings, **kw):
    from floe.streaming.job import StreamJob

    job = StreamJob(spark, settings, available_now=True, max_files_per_trigger=7, **kw)
    job.run(poll_seconds=0.5)
    return job


def test_stream_matches_dbt_and_honours_the_change_flag(spark, lakehouse, dbt, tmp_path):
    from floe.runtime import Settings, use_settings

    opts = GenerateOptions(landing=lakehouse.landing, days=1, scale=160, bad_share=0.02)
    generate(opts)
    folder = lakehouse.landing / "reference" / "product_priority"
    assert (folder / "_CHANGED").exists()

    job = _run(spark, lakehouse)
    assert len([b for b in job.batches if len(b) > 2]) >= 2  # several micro-batches
    assert not (folder / "_CHANGED").exists()  # refreshed, then the flag removed
    assert spark.table("raw.product_priority").count() == 5
    streamed = {t: _rows(spark, t) for t in RAW}
    # error_detail of unknown_schema names the registry file, which differs per lakehouse
    quarantined = _rows(spark, "raw.quarantine", drop=("_ingested_at", "error_detail"))
    assert all(streamed.values()) and quarantined

    # Restart: nothing new, nothing committed.
    before = {t: _snapshot(spark, t) for t in [*RAW, "raw.quarantine", "raw.stream_files"]}
    _run(spark, lakehouse)
    assert {t: _snapshot(spark, t) for t in before} == before

    # A new reference extract without the flag is not read; with it, it is.
    (folder / "product_priority_2022-07-09.csv").write_text(
        "item,price,priority,updated_at\nburger,100,low,2022-07-09 00:00:00\n"
    )
    _run(spark, lakehouse)
    assert spark.table("raw.product_priority").count() == 5
    (folder / "_CHANGED").write_bytes(b"")
    _run(spark, lakehouse)
    assert spark.table("raw.product_priority").count() == 6
    assert not (folder / "_CHANGED").exists()
    (folder / "product_priority_2022-07-09.csv").unlink()

    # The same landed files through dbt build, in a second lakehouse.
    other = Settings.from_env(
        {"FLOE_HOME": str(tmp_path / "batch"), "FLOE_LANDING": str(lakehouse.landing)}
    )
    use_settings(spark, other)
    dbt(["build", "-s", "path:python_models/raw/streams"])
    assert {t: _rows(spark, t) for t in RAW} == streamed
    assert _rows(spark, "raw.quarantine", drop=("_ingested_at", "error_detail")) == quarantined
