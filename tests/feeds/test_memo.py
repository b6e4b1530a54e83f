""" "Nothing new" from the memo of the last complete ingest, and every way it must miss.

The memo (floe.feeds.ingest, in the one memo store floe.runtime.settled) lets a build skip the ledger reads when the landing listing
and the raw table's snapshot are as they were after the last complete, reconciled
ingest. Here the ledger's readers are replaced by ones that count their calls, so each
step shows which path an ingest took; what it returns is checked either way.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from floe.registry import codec
from floe.registry.sync import schemas_dir, sync_local_registry
from tests.decode import hostile
from tests.helpers import ROOT, feed

pytestmark = pytest.mark.integration

WEATHER = {"temperature": 60, "location": {"city": "Phoenix", "state": "Arizona"}, "timestamp": 1}


def _land(settings, name: str, first: int) -> Path:

    folder = settings.landing / "streams/weather/ingest_year=2022/ingest_month=07/ingest_day=01"
    folder = folder / "ingest_hour=00"
    folder.mkdir(parents=True, exist_ok=True)
    registry = sync_local_registry(settings.state_dir, schemas_dir(ROOT))
    data = hostile.b64(codec.frame(WEATHER, registry.latest("weather_report")))
    path = folder / name
    path.write_bytes(b"\n".join(hostile.envelope(data, first + i) for i in range(3)) + b"\n")
    return path


def test_nothing_new_comes_from_the_memo_until_anything_changes(spark, tmp_path, monkeypatch):
    from floe.feeds import ledger
    from floe.feeds.ingest import ingest, reconcile_or_raise
    from floe.runtime import Settings, use_settings

    settings = Settings.from_env({"FLOE_HOME": str(tmp_path / "floe"), "FLOE_SETTLE_SECONDS": "0"})
    use_settings(spark, settings)
    weather = feed("weather")
    full_path_reads = []
    done_files = ledger.done_files
    monkeypatch.setattr(
        ledger,
        "done_files",
        lambda *a, **k: full_path_reads.append(1) or done_files(*a, **k),
    )

    def build(raw_exists: bool = True) -> list[str]:
        result = ingest(spark, weather, raw_exists=raw_exists, settings=settings, project_dir=ROOT)
        if raw_exists:
            result.rows.writeTo(weather.raw_table).append()
        else:
            result.rows.writeTo(weather.raw_table).using("iceberg").create()
        assert reconcile_or_raise(spark, weather) == 0
        return result.files

    first = _land(settings, "a.jsonl", 0)
    assert build(raw_exists=False) == [first.relative_to(settings.landing).as_posix()]
    memo_file = settings.state_dir / "settled" / "feeds" / f"{weather.id}.json"
    assert memo_file.exists()  # written after the commit reconciled
    reads = len(full_path_reads)

    # nothing landed, nothing committed: answered by the memo, no ledger read
    assert build() == []
    assert len(full_path_reads) == reads
    assert spark.table("raw.weather").count() == 3

    # a new file: the full path, which reads it
    second = _land(settings, "b.jsonl", 3)
    assert build() == [second.relative_to(settings.landing).as_posix()]
    assert len(full_path_reads) == reads + 1
    assert build() == [] and len(full_path_reads) == reads + 1  # remembered again

    # a commit to the raw table by anyone else (here a compaction): full path
    spark.sql(
        f"call {settings.catalog_name}.system.rewrite_data_files(table => 'raw.weather', "
        "options => map('rewrite-all', 'true'))"
    ).collect()
    assert build() == [] and len(full_path_reads) == reads + 2

    # a file touched after it was ingested: full path (which checks and reports it). Its
    # time moves back, not forward: a time in the future would make it wait to settle.
    stat = first.stat()
    os.utime(first, ns=(stat.st_atime_ns, stat.st_mtime_ns - 5_000_000_000))
    assert build() == [] and len(full_path_reads) == reads + 3

    # the raw table lost and created again, empty: full path, which reads every file again
    schema = spark.table("raw.weather").schema
    spark.sql("drop table raw.weather")
    spark.createDataFrame([], schema).writeTo("raw.weather").using("iceberg").create()
    assert sorted(build()) == sorted(
        p.relative_to(settings.landing).as_posix() for p in (first, second)
    )
    assert spark.table("raw.weather").count() == 6

    # an unreadable memo is a miss, never an error
    memo_file.write_text("{not json")
    assert build() == [] and len(full_path_reads) == reads + 5
