"""Files still being written are not half-read; files changed after ingestion are reported.

A stream file grows line by line (a writer mid-line, then done); discovery, reading
and the ledger must never take a cut version of it. Time passing is simulated by
moving the file's modification time back (``os.utime``), never by sleeping.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from floe.registry import codec
from floe.registry.sync import schemas_dir, sync_local_registry
from tests.decode import hostile
from tests.helpers import ROOT, feed

pytestmark = pytest.mark.integration

WEATHER = {"temperature": 60, "location": {"city": "Phoenix", "state": "Arizona"}, "timestamp": 1}


def _file(landing: Path) -> Path:
    folder = landing / "streams/weather/ingest_year=2022/ingest_month=07/ingest_day=01"
    folder = folder / "ingest_hour=00"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / "growing.jsonl"


def _age(path: Path, seconds: float) -> None:
    """Pretend the file was last written ``seconds`` ago."""
    then = time.time() - seconds
    os.utime(path, (then, then))


def _settings(tmp_path: Path, settle: str):
    from floe.runtime import Settings

    return Settings.from_env({"FLOE_HOME": str(tmp_path / "floe"), "FLOE_SETTLE_SECONDS": settle})


def _lines(settings, n: int, first: int = 0) -> list[bytes]:

    registry = sync_local_registry(settings.state_dir, schemas_dir(ROOT))
    data = hostile.b64(codec.frame(WEATHER, registry.latest("weather_report")))
    return [hostile.envelope(data, first + i) for i in range(n)]


def _count(spark, sql: str) -> int:
    return spark.sql(sql).first()[0]


def test_a_growing_file_is_taken_only_when_complete(spark, tmp_path):
    from floe.feeds.ingest import ingest, reconcile_or_raise
    from floe.runtime import use_settings

    settings = _settings(tmp_path, "60")
    use_settings(spark, settings)
    weather = feed("weather")
    path = _file(settings.landing)
    lines = _lines(settings, 6)

    # the writer has written 3 lines and half of the fourth
    path.write_bytes(b"\n".join(lines[:3]) + b"\n" + lines[3][:25])
    first = ingest(spark, weather, raw_exists=False, settings=settings, project_dir=ROOT)
    assert first.files == []  # younger than the settle time: left for a later build
    assert _count(spark, "select count(*) from raw.landed_files") == 0

    # the writer finishes; a minute later the file has settled
    with path.open("ab") as out:
        out.write(lines[3][25:] + b"\n" + b"\n".join(lines[4:]) + b"\n")
    _age(path, 120)
    second = ingest(spark, weather, raw_exists=False, settings=settings, project_dir=ROOT)
    assert second.files == [path.relative_to(settings.landing).as_posix()]
    second.rows.writeTo(weather.raw_table).using("iceberg").create()
    assert reconcile_or_raise(spark, weather, always=True) == 0
    assert spark.table("raw.weather").count() == 6
    assert _count(spark, "select count(*) from raw.quarantine") == 0


def test_a_file_that_changes_while_it_is_read_is_not_recorded(spark, tmp_path):
    from floe.feeds.ingest import context, ingest, reconcile_or_raise
    from floe.feeds.kinds import stream
    from floe.runtime import use_settings

    settings = _settings(tmp_path, "0")
    use_settings(spark, settings)
    weather = feed("weather")
    path = _file(settings.landing)
    lines = _lines(settings, 5)
    path.write_bytes(b"\n".join(lines[:2]) + b"\n")
    discovered = stream.discover(weather, settings.landing)
    # the writer appends between discovery and the read
    with path.open("ab") as out:
        out.write(b"\n".join(lines[2:]) + b"\n")
    batch = stream.read(spark, weather, discovered, context(settings, ROOT))
    key = path.relative_to(settings.landing).as_posix()
    assert batch.counts[key].skipped and "size changed" in batch.counts[key].skipped
    assert batch.rows.count() == 0 and batch.quarantine is not None
    assert batch.quarantine.count() == 0

    # through ingest: nothing recorded for it, and the next build reads it whole
    result = ingest(spark, weather, raw_exists=False, settings=settings, project_dir=ROOT)
    assert result.files == [key]
    result.rows.writeTo(weather.raw_table).using("iceberg").create()
    assert reconcile_or_raise(spark, weather, always=True) == 0
    assert spark.table("raw.weather").count() == 5
    row = spark.sql("select bytes, checksum from raw.landed_files").first()
    from floe.feeds.files import file_checksum

    assert (row[0], row[1]) == (path.stat().st_size, file_checksum(path))


def test_a_file_changed_after_ingestion_is_reported_once_not_reread(spark, tmp_path):
    from floe.feeds.ingest import ingest
    from floe.runtime import use_settings

    settings = _settings(tmp_path, "0")
    use_settings(spark, settings)
    weather = feed("weather")
    path = _file(settings.landing)
    lines = _lines(settings, 4)
    path.write_bytes(b"\n".join(lines[:3]) + b"\n")
    done = ingest(spark, weather, raw_exists=False, settings=settings, project_dir=ROOT)
    done.rows.writeTo(weather.raw_table).using("iceberg").create()

    # touched only (same bytes, new mtime): no change
    _age(path, -5)
    again = ingest(spark, weather, raw_exists=True, settings=settings, project_dir=ROOT)
    assert again.files == []
    assert spark.table("raw.landed_file_changes").count() == 0

    # rewritten with other content of the same size: a content change
    original = path.read_bytes()
    path.write_bytes(original.replace(b'"key-0"', b'"key-9"'))
    ingest(spark, weather, raw_exists=True, settings=settings, project_dir=ROOT)
    # appended to: a size change; reported once however many builds see it
    with path.open("ab") as out:
        out.write(lines[3] + b"\n")
    for _ in range(2):
        again = ingest(spark, weather, raw_exists=True, settings=settings, project_dir=ROOT)
        assert again.files == []  # never read again
    changes = spark.sql(
        "select change, recorded_bytes, observed_bytes, observed_checksum "
        "from raw.landed_file_changes order by detected_at"
    ).collect()
    assert [c[0] for c in changes] == ["content", "size"]
    assert changes[0][1] == changes[0][2] and changes[0][3].startswith("sha256x8m:")
    assert changes[1][2] == path.stat().st_size
    assert spark.table("raw.weather").count() == 3
