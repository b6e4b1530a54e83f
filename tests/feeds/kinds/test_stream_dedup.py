"""Redeliveries of the stream kind: the check is skipped only when the decode proved a
batch's sequence numbers unique and the raw table holds none of their range; otherwise
it runs, and every redelivery still becomes a ``duplicate`` row."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from floe.feeds.kinds import stream_dedup
from floe.registry import codec
from floe.registry.sync import schemas_dir, sync_local_registry
from tests.decode import hostile
from tests.helpers import ROOT, feed

pytestmark = pytest.mark.integration

WEATHER = {"temperature": 60, "location": {"city": "Phoenix", "state": "Arizona"}, "timestamp": 1}


def _land(landing: Path, hour: int, name: str, data: str, seqs: list[int]) -> None:
    folder = (
        landing / "streams/weather/ingest_year=2022/ingest_month=07/ingest_day=01"
        f"/ingest_hour={hour:02d}"
    )
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(b"".join(hostile.envelope(data, s) + b"\n" for s in seqs))


@pytest.mark.parametrize("engine", ["jvm", "python"])
def test_the_check_is_skipped_only_when_no_redelivery_can_exist(
    spark, tmp_path, monkeypatch, engine
):
    from floe.feeds.ingest import ingest, reconcile_or_raise
    from floe.runtime import Settings, use_settings

    settings = Settings.from_env(
        {
            "FLOE_HOME": str(tmp_path / "floe"),
            "FLOE_SETTLE_SECONDS": "0",
            "FLOE_DECODE_ENGINE": engine,  # each decoder proves uniqueness its own way
        }
    )
    use_settings(spark, settings)
    registry = sync_local_registry(settings.state_dir, schemas_dir(ROOT))
    data = hostile.b64(codec.frame(WEATHER, registry.latest("weather_report")))
    checks = []
    real = stream_dedup.duplicates
    monkeypatch.setattr(
        stream_dedup, "duplicates", lambda *a, **k: checks.append(1) or real(*a, **k)
    )
    weather = feed("weather")

    def build() -> Counter:
        exists = spark.catalog.tableExists(weather.raw_table)
        result = ingest(spark, weather, raw_exists=exists, settings=settings, project_dir=ROOT)
        if exists:
            result.rows.writeTo(weather.raw_table).append()
        else:
            result.rows.writeTo(weather.raw_table).using("iceberg").create()
        assert reconcile_or_raise(spark, weather, always=True) == 0
        rows = spark.sql(
            "select error_detail from raw.quarantine where error_code = 'duplicate'"
        ).collect()
        return Counter(r[0].split(" ")[2] for r in rows)  # by sequence number

    # Two files, each increasing, their ranges apart, nothing in raw yet: no check.
    _land(settings.landing, 0, "a.jsonl", data, [1, 2, 3, 4, 5])
    _land(settings.landing, 1, "b.jsonl", data, [10, 11, 12])
    assert build() == Counter() and checks == []
    assert spark.table("raw.weather").count() == 8

    # Increasing and unique, but 12 is in raw already: the probe sends it to the check.
    _land(settings.landing, 2, "c.jsonl", data, [12, 30, 31])
    assert build() == Counter({str(10**20 + 12): 1}) and len(checks) == 1

    # Two files, each increasing, whose ranges overlap and share 41: checked.
    _land(settings.landing, 3, "d.jsonl", data, [40, 41])
    _land(settings.landing, 4, "e.jsonl", data, [41, 42])
    assert build()[str(10**20 + 41)] == 1 and len(checks) == 2

    # One file out of order with a repeat inside it: checked.
    _land(settings.landing, 5, "f.jsonl", data, [50, 52, 51, 52])
    assert build()[str(10**20 + 52)] == 1 and len(checks) == 3
    assert spark.table("raw.weather").count() == 8 + 2 + 3 + 3


def _piece(low: str | None, high: str | None, unique: bool = True):
    from floe.decode.core import PieceCounts

    return PieceCounts("p", "f", 0, 1, 1, 1, 0, low, high, None, None, unique)


def test_pieces_are_unique_together_only_when_their_ranges_are_apart():
    from floe.feeds.kinds.stream import _unique_sequences

    assert _unique_sequences([_piece("10", "19"), _piece("20", "29"), _piece(None, None)])
    assert not _unique_sequences([_piece("10", "20"), _piece("20", "29")])  # share 20
    assert not _unique_sequences([_piece("10", "19"), _piece("12", "13")])  # nested
    assert not _unique_sequences([_piece("10", "19", unique=False), _piece("20", "29")])
    # an empty sequence number is a value like any other, compared by code point
    assert not _unique_sequences([_piece("", ""), _piece("", "5")])
    assert _unique_sequences([_piece("", ""), _piece("0", "5")])
