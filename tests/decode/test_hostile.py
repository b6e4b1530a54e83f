"""The hostile corpus through Spark: every record ends in raw.<stream> or raw.quarantine.

Files of hostile lines (tests/decode/hostile.py) land beside good ones; one ingest
decodes them all — no task fails (in local mode one failed task aborts the job and
``ingest`` would raise), the files are recorded, and per file the quarantine codes
and the raw rows are exactly the expected ones. Redeliveries (a sequence number seen
earlier in the batch or already in the raw table) are quarantined as ``duplicate``;
a symlink out of the landing zone is not read.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from floe.registry import codec
from floe.registry.samples import unicorn_ride_request
from floe.registry.sync import schemas_dir, sync_local_registry
from tests.decode import hostile
from tests.helpers import ROOT, feed

pytestmark = pytest.mark.integration

LIMITS = {
    "FLOE_DECODE_MAX_LINE_BYTES": str(2 << 20),
    "FLOE_DECODE_MAX_RECORD_BYTES": str(1 << 20),
    "FLOE_DECODE_MAX_INFLATED_BYTES": str(1 << 20),
    "FLOE_SETTLE_SECONDS": "0",
}
WEATHER = {"temperature": 60, "location": {"city": "Phoenix", "state": "Arizona"}, "timestamp": 1}


def _hour(landing: Path, name: str, hour: int) -> Path:
    folder = (
        landing
        / "streams"
        / name
        / "ingest_year=2022/ingest_month=07/ingest_day=01"
        / f"ingest_hour={hour:02d}"
    )
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _write(path: Path, lines: list[tuple[str, bytes]]) -> None:
    path.write_bytes(b"".join(line + b"\n" for _, line in lines))


def _codes(spark, name: str) -> dict[str, Counter]:
    rows = spark.sql(
        "select _source_file, error_code from raw.quarantine where feed = :feed",
        args={"feed": name},
    ).collect()
    out: dict[str, Counter] = {}
    for key, code in rows:
        out.setdefault(key, Counter())[code] += 1
    return out


def _raw_counts(spark, table: str) -> Counter:
    return Counter(r[0] for r in spark.table(table).select("_source_file").collect())


def _expected(lines: list[tuple[str, bytes]], expect) -> tuple[Counter, int]:
    codes: Counter = Counter()
    good = 0
    for label, _ in lines:
        want = expect(label)
        if want is None:
            good += 1
        else:
            codes[want] += 1
    return codes, good


def test_hostile_corpus_reconciles_with_every_code(spark, tmp_path, bomb_bytes):
    from floe.feeds.ingest import ingest, reconcile_or_raise
    from floe.runtime import Settings, use_settings

    settings = Settings.from_env({"FLOE_HOME": str(tmp_path / "floe"), **LIMITS})
    use_settings(spark, settings)
    registry = sync_local_registry(settings.state_dir, schemas_dir(ROOT))
    landing = settings.landing

    # -- weather (JSON): the JSON corpus, the envelope corpus, good records, redeliveries
    weather_v = registry.latest("weather_report")
    huge = (1 << 20) + (1 << 18)
    json_lines = list(
        hostile.lines_for(hostile.json_corpus(weather_v, WEATHER, bomb_bytes, huge), 0)
    )
    good_data = hostile.b64(codec.frame(WEATHER, weather_v))
    env_lines = list(hostile.envelope_corpus(good_data, 1000, 2 << 20))
    goods = [(f"good {n}", hostile.envelope(good_data, 2000 + n)) for n in range(5)]
    a = _hour(landing, "weather", 0) / "a weather.jsonl"
    _write(a, json_lines + env_lines + goods)
    # file b: a redelivery of a's good record 2000, one record twice, one new record
    b = _hour(landing, "weather", 1) / "b.jsonl"
    b_lines = [
        ("dup of a", hostile.envelope(good_data, 2000)),
        ("new", hostile.envelope(good_data, 3000)),
        ("again", hostile.envelope(good_data, 3000)),
        ("new 2", hostile.envelope(good_data, 3001)),
    ]
    _write(b, b_lines)
    # a symlink to a file outside the landing zone is not read
    outside = tmp_path / "outside.jsonl"
    _write(outside, goods)
    (_hour(landing, "weather", 2) / "link.jsonl").symlink_to(outside)

    # -- unicorn_rides (Avro): the Avro corpus
    rides_v = registry.latest("unicorn_ride_request")
    good_ride = unicorn_ride_request(5)
    avro_lines = list(hostile.lines_for(hostile.avro_corpus(rides_v, good_ride, bomb_bytes), 0))
    c = _hour(landing, "unicorn_rides", 0) / "c.jsonl"
    _write(c, avro_lines)

    results = {}
    for name in ("weather", "unicorn_rides"):
        f = feed(name)
        result = ingest(spark, f, raw_exists=False, settings=settings, project_dir=ROOT)
        result.rows.writeTo(f.raw_table).using("iceberg").create()
        assert reconcile_or_raise(spark, f, always=True) == 0
        results[name] = result

    key = lambda p: p.relative_to(landing).as_posix()  # noqa: E731
    assert sorted(results["weather"].files) == sorted([key(a), key(b)])  # no link.jsonl
    weather_codes = _codes(spark, "weather")
    weather_raw = _raw_counts(spark, "raw.weather")

    json_codes, json_good = _expected(json_lines, hostile.expected_json)
    env_codes, _ = _expected(env_lines, hostile.ENVELOPE_EXPECTED.__getitem__)
    assert weather_codes[key(a)] == json_codes + env_codes
    assert weather_raw[key(a)] == json_good + len(goods)
    # b: 2000 was in a (earlier in the batch), 3000 twice: two duplicates, two loaded
    assert weather_codes[key(b)] == Counter({"duplicate": 2})
    assert weather_raw[key(b)] == 2
    details = [
        r[0]
        for r in spark.sql(
            "select error_detail from raw.quarantine where error_code = 'duplicate'"
        ).collect()
    ]
    assert any("a weather.jsonl" in d for d in details), details

    avro_codes = _codes(spark, "unicorn_rides")[key(c)]
    rides_raw = _raw_counts(spark, "raw.unicorn_rides")[key(c)]
    assert sum(avro_codes.values()) + rides_raw == len(avro_lines)
    for code, n in _expected(avro_lines, hostile.expected_avro)[0].items():
        if code is not hostile.ANY_CODE:
            assert avro_codes[code] >= n, (code, avro_codes)
    assert rides_raw == 1  # "zlib good"; every other Avro line is broken

    # the ledger: one row per file with its size and checksum
    ledger_rows = {
        r[0]: (r[1], r[2])
        for r in spark.sql(
            "select _source_file, bytes, checksum from raw.landed_files where feed = 'weather'"
        ).collect()
    }
    from floe.feeds.files import file_checksum

    assert ledger_rows[key(a)] == (a.stat().st_size, file_checksum(a))

    # -- a later redelivery of already ingested records: all duplicates
    d = _hour(landing, "weather", 3) / "d.jsonl"
    _write(d, b_lines[1:2] + goods[:2] + [("fresh", hostile.envelope(good_data, 4000))])
    f = feed("weather")
    again = ingest(spark, f, raw_exists=True, settings=settings, project_dir=ROOT)
    assert again.files == [key(d)]
    again.rows.writeTo(f.raw_table).append()
    assert reconcile_or_raise(spark, f, always=True) == 0
    assert _codes(spark, "weather")[key(d)] == Counter({"duplicate": 3})
    assert _raw_counts(spark, "raw.weather")[key(d)] == 1
    in_raw = spark.sql(
        "select count(*) from raw.quarantine where feed = 'weather' and error_code = 'duplicate' "
        "and error_detail like '%already in raw.weather%'"
    ).first()[0]
    assert in_raw == 3
    # duplicates keep the decoded record, readable, in raw_data
    sample = spark.sql(
        "select raw_data from raw.quarantine where error_code = 'duplicate' limit 1"
    ).first()[0]
    assert json.loads(sample)["location"]["city"] == "Phoenix"


@pytest.fixture(scope="module")
def bomb_bytes() -> bytes:
    return hostile.zlib_bomb()
