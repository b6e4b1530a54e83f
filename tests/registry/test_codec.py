"""Seed-shaped records framed by the codec come back unchanged; failures carry codes."""

from __future__ import annotations

import base64
import json
import uuid
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from floe.registry import wire
from floe.registry.backends import FileRegistry, SchemaDef
from floe.registry.codec import DECODE_ERRORS, frame, unframe
from floe.registry.samples import unicorn_ride_request

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas" / "floe"


WEATHER = [  # WeatherReport samples (the Phoenix one has an extra root property)
    {
        "temperature": 89,
        "location": {"city": "Orlando", "state": "Florida"},
        "timestamp": 1627335205,
    },
    {
        "location": {"city": "Phoenix", "state": "Arizona"},
        "temperature": 115,
        "windSpeed": 50,
        "timestamp": 1627335205,
    },
]


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> FileRegistry:
    reg = FileRegistry(tmp_path_factory.mktemp("codec-reg"))
    for name, fmt, files in [
        ("unicorn_ride_request", "AVRO", ["v1.avsc"]),
        ("weather_report", "JSON", ["v1.json", "v2.json"]),
    ]:
        for file in files:
            definition = json.loads((SCHEMAS / name / file).read_text())
            reg.register_version(SchemaDef(name=name, data_format=fmt, definition=definition))
    return reg


@pytest.mark.parametrize("compress", [False, True])
def test_unicorn_ride_requests_round_trip(registry: FileRegistry, compress: bool) -> None:
    version = registry.latest("unicorn_ride_request")
    for i in range(3):
        framed = frame(unicorn_ride_request(i), version, compress=compress)
        assert framed[:2] == (b"\x03\x05" if compress else b"\x03\x00")
        assert framed[2:18] == version.uuid.bytes
        got_version, record = unframe(framed, registry)
        assert got_version == version
        assert record == unicorn_ride_request(i)


@pytest.mark.parametrize("compress", [False, True])
@pytest.mark.parametrize("version_number", [1, 2])
def test_weather_reports_round_trip(
    registry: FileRegistry, compress: bool, version_number: int
) -> None:
    version = registry.versions("weather_report")[version_number - 1]
    for record in WEATHER:
        framed = frame(record, version, compress=compress)
        assert unframe(framed, registry) == (version, record)
    with_country = {**WEATHER[0], "location": {**WEATHER[0]["location"], "country": "USA"}}
    if version_number == 2:
        assert unframe(frame(with_country, version), registry)[1] == with_country


def test_base64_landing_record_decodes(registry: FileRegistry) -> None:
    version = registry.latest("weather_report")
    text = base64.b64encode(frame(WEATHER[1], version, compress=True)).decode()
    assert unframe(wire.decode_base64(text), registry)[1] == WEATHER[1]


def _code(data: bytes, registry: FileRegistry) -> str:
    try:
        unframe(data, registry)
    except DECODE_ERRORS as exc:
        return exc.code
    return "ok"


def test_every_failure_class_has_its_code(registry: FileRegistry) -> None:
    avro = registry.latest("unicorn_ride_request")
    weather = registry.versions("weather_report")[0]
    good = frame(unicorn_ride_request(1), avro)
    assert _code(good, registry) == "ok"
    assert _code(b"\x07" + good[1:], registry) == "bad_header"
    assert _code(good[:1] + b"\x09" + good[2:], registry) == "unknown_compression"
    assert _code(good[:10], registry) == "truncated"
    assert _code(good[:1] + b"\x05" + good[2:], registry) == "bad_zlib"
    assert _code(wire.encode_glue(good[18:], uuid.uuid4()), registry) == "unknown_schema"
    assert _code(good[:-5], registry) == "avro_decode"  # truncated Avro
    assert _code(good + b"\x00\x01", registry) == "avro_decode"  # trailing bytes
    assert _code(wire.encode_glue(b'{"temperature": ', weather.uuid), registry) == "json_parse"
    assert _code(wire.encode_glue(b"\xff\xfe", weather.uuid), registry) == "json_parse"
    bad = {"temperature": "hot", "location": {"city": "X", "state": "Y"}, "timestamp": 1}
    assert (
        _code(wire.encode_glue(json.dumps(bad).encode(), weather.uuid), registry)
        == "schema_violation"
    )
    # v1's location is closed: a country is a violation there, not in v2.
    closed = {**WEATHER[0], "location": {"city": "X", "state": "Y", "country": "Z"}}
    assert (
        _code(wire.encode_glue(json.dumps(closed).encode(), weather.uuid), registry)
        == "schema_violation"
    )
    with pytest.raises(DECODE_ERRORS) as excinfo:
        unframe(wire.encode_glue(json.dumps(bad).encode(), weather.uuid), registry)
    assert "temperature" in str(excinfo.value)


def test_confluent_frames_need_an_id_mapping(registry: FileRegistry) -> None:
    version = registry.latest("weather_report")
    data = wire.encode_confluent(json.dumps(WEATHER[0]).encode(), 7)
    assert _code(data, registry) == "unknown_schema"
    assert unframe(data, registry, confluent_ids={7: version.uuid}) == (version, WEATHER[0])


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=0, max_value=10_000), st.integers(1, 255), st.booleans())
def test_corrupted_avro_frames_never_escape_unhandled(
    registry: FileRegistry, pos: int, delta: int, compress: bool
) -> None:
    """Any single-byte corruption either decodes or fails with a quarantine code."""
    version = registry.latest("unicorn_ride_request")
    data = bytearray(frame(unicorn_ride_request(3), version, compress=compress))
    pos %= len(data)
    data[pos] = (data[pos] + delta) % 256
    assert _code(bytes(data), registry) in {
        "ok",
        "bad_header",
        "unknown_compression",
        "bad_zlib",
        "unknown_schema",
        "avro_decode",
    }
