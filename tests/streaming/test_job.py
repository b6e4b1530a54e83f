"""`floe stream` (availableNow) writes what `dbt build` writes, resumes from its
checkpoint, and refreshes reference data only when the `_CHANGED` flag changes (the
flag is never modified or deleted: its modification time is floe's state)."""

from __future__ import annotations

import os

import pytest

from floe.generator import GenerateOptions, generate
from tests.helpers import feeds_of

pytestmark = pytest.mark.integration

RAW = [f"raw.{f.name}" for f in feeds_of("stream")]


def _rows(spark, table, drop=("_ingested_at", "_load_seq")):
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

    job = StreamJob(spark, settings, available_now=True, max_files_per_trigger=2, **kw)
    job.run(poll_seconds=0.5)
    return job


def test_stream_matches_dbt_and_honours_the_change_flag(spark, lakehouse, dbt, tmp_path):
    from floe.runtime import Settings, use_settings

    opts = GenerateOptions(landing=lakehouse.landing, days=1, scale=160, bad_share=0.02)
    generate(opts, ["streams", "reference"])
    folder = lakehouse.landing / "reference" / "product_priority"
    assert (folder / "_CHANGED").exists()

    job = _run(spark, lakehouse)
    assert len([b for b in job.batches if len(b) > 2]) >= 2  # several micro-batches
    assert (folder / "_CHANGED").exists()  # refreshed; the landed flag is left alone
    assert spark.table("raw.product_priority").count() == 5
    streamed = {t: _rows(spark, t) for t in RAW}
    # error_detail of unknown_schema names the registry file, which differs per lakehouse
    quarantined = _rows(spark, "raw.quarantine", drop=("_ingested_at", "error_detail"))
    assert all(streamed.values()) and quarantined

    # Restart: nothing new, nothing committed.
    before = {t: _snapshot(spark, t) for t in [*RAW, "raw.quarantine", "raw.landed_files"]}
    _run(spark, lakehouse)
    assert {t: _snapshot(spark, t) for t in before} == before

    # A new reference extract without the flag is not read; with it, it is.
    (folder / "product_priority_2022-07-09.csv").write_text(
        "item,price,priority,updated_at\nburger,100,low,2022-07-09 00:00:00\n"
    )
    _run(spark, lakehouse)
    assert spark.table("raw.product_priority").count() == 5
    flag = folder / "_CHANGED"
    stat = flag.stat()
    os.utime(flag, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # upstream touches it
    _run(spark, lakehouse)
    assert spark.table("raw.product_priority").count() == 6
    assert flag.exists()
    (folder / "product_priority_2022-07-09.csv").unlink()

    # The same landed files through dbt build, in a second lakehouse.
    other = Settings.from_env(
        {"FLOE_HOME": str(tmp_path / "batch"), "FLOE_LANDING": str(lakehouse.landing)}
    )
    use_settings(spark, other)
    dbt(["build", "-s", "path:python_models/raw/streams"])
    # the micro-batches and the dbt models wrote the same rows
    assert {t: _rows(spark, t) for t in RAW} == streamed
    assert _rows(spark, "raw.quarantine", drop=("_ingested_at", "error_detail")) == quarantined
