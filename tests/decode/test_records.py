"""Every hostile line yields one row with its own code; nothing a record holds escapes.

Pure Python (no Spark): the functions Python workers run, over the generated corpus.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from floe.decode.records import (
    CODES,
    DecodeLimits,
    RecordDecoder,
    StreamSpec,
    decode_lines_batch,
    to_record_batch,
)
from floe.registry import codec, wire
from floe.registry.backends import FileRegistry, UnknownSchemaError
from floe.registry.samples import unicorn_ride_request
from tests.decode import hostile

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas" / "floe"
LIMITS = DecodeLimits(
    max_line_bytes=2 << 20, max_record_bytes=1 << 20, max_inflated_bytes=1 << 20, max_depth=128
)
WEATHER = {"temperature": 60, "location": {"city": "Phoenix", "state": "Arizona"}, "timestamp": 1}


@pytest.fixture(scope="module")
def bomb() -> bytes:
    return hostile.zlib_bomb()


def _arrow_type(name: str, fmt: str, file: str):
    from pyspark.sql.pandas.types import to_arrow_schema

    from floe.decode.core import decode_output_schema
    from floe.registry.types import to_spark_type

    record = to_spark_type((SCHEMAS / name / file).read_text(), fmt)
    return to_arrow_schema(decode_output_schema(record))


def _run(lines: list[tuple[str, bytes]], decoder: RecordDecoder, schema) -> list[tuple]:
    triples = [
        (n, line[: LIMITS.max_line_bytes + 1], len(line)) for n, (_, line) in enumerate(lines)
    ]
    cols = decode_lines_batch(triples, decoder)
    fixed = {
        "_source_file": "f",
        "ingest_year": 2022,
        "ingest_month": 7,
        "ingest_day": 1,
        "ingest_hour": 0,
    }
    batch = to_record_batch(cols, schema, fixed)
    assert batch.num_rows == len(lines)  # one row per line, whatever it held
    out = batch.to_pylist()
    return [
        (label, row["error_code"], row["error_detail"], row["record"], row["raw_data"])
        for (label, _), row in zip(lines, out, strict=True)
    ]


def _check(results: list[tuple], expect) -> None:
    for label, code, detail, record, raw_data in results:
        want = expect(label)
        if want is None:
            assert code is None and record is not None, (label, code, detail)
        else:
            assert code is not None and record is None, (label, record)
            assert code in CODES, (label, code)
            assert detail and raw_data is not None, (label, code)
            if want is not hostile.ANY_CODE:
                assert code == want, (label, code, detail)


def test_hostile_avro_records_each_get_their_code(registry: FileRegistry, bomb: bytes) -> None:
    version = registry.latest("unicorn_ride_request")
    decoder = RecordDecoder(StreamSpec("unicorn_rides", "unicorn_ride_request"), registry, LIMITS)
    good = unicorn_ride_request(3)
    lines = list(hostile.lines_for(hostile.avro_corpus(version, good, bomb), 0))
    lines.append(("good", hostile.envelope(hostile.b64(codec.frame(good, version)), 99)))
    schema = _arrow_type("unicorn_ride_request", "AVRO", "v1.avsc")
    results = _run(lines, decoder, schema)
    _check(results, lambda label: None if label == "good" else hostile.expected_avro(label))
    decoded = {label: record for label, _, _, record, _ in results}
    assert decoded["good"] == decoded["zlib good"] == {**good, "ride_fare": pytest.approx(1200.5)}


def test_hostile_json_and_envelopes_each_get_their_code(
    registry: FileRegistry, bomb: bytes
) -> None:
    version = registry.latest("weather_report")
    decoder = RecordDecoder(StreamSpec("weather", "weather_report"), registry, LIMITS)
    huge = LIMITS.max_record_bytes + LIMITS.max_record_bytes // 5
    lines = list(hostile.lines_for(hostile.json_corpus(version, WEATHER, bomb, huge), 0))
    good_data = hostile.b64(codec.frame(WEATHER, version))
    envelope_lines = list(hostile.envelope_corpus(good_data, 1000, LIMITS.max_line_bytes))
    schema = _arrow_type("weather_report", "JSON", "v2.json")
    _check(_run(lines, decoder, schema), hostile.expected_json)
    _check(_run(envelope_lines, decoder, schema), hostile.ENVELOPE_EXPECTED.__getitem__)


def test_nan_and_infinity_are_not_json() -> None:
    for text in (b"NaN", b"[Infinity]", b'{"a": -Infinity}'):
        with pytest.raises(codec.JsonParseError):
            codec.parse_json(text)
    with pytest.raises(codec.TooDeepError):
        codec.parse_json(b"[" * 200 + b"]" * 200, max_depth=128)
    assert codec.parse_json(b"[" * 100 + b"]" * 100, max_depth=128) == eval("[" * 100 + "]" * 100)


def test_inflation_stops_at_the_cap_without_inflating_the_rest(bomb: bytes) -> None:
    with pytest.raises(wire.InflateLimitError, match="inflates past the cap of 1000 bytes"):
        wire.inflate(bomb, 1000)
    assert wire.inflate(wire.encode_glue(b"x" * 1000, uuid.uuid4(), True)[18:], 1000) == b"x" * 1000


def test_unexpected_errors_are_quarantined_not_raised(registry: FileRegistry) -> None:
    class Exploding(StreamSpec):
        @property
        def timestamps(self):  # type: ignore[override]
            raise RuntimeError("boom")

    version = registry.latest("unicorn_ride_request")
    decoder = RecordDecoder(StreamSpec("unicorn_rides", "unicorn_ride_request"), registry, LIMITS)

    def explode(*_: object) -> None:
        raise RecursionError("maximum recursion depth exceeded")

    decoder._typed = explode  # type: ignore[method-assign]
    framed = codec.frame(unicorn_ride_request(1), version, compress=True)
    record, _, code, detail, _ = decoder.decode(hostile.b64(framed))
    assert (record, code) == (None, "too_deep") and "stack" in detail

    def oom(*_: object) -> None:
        raise MemoryError

    decoder._typed = oom  # type: ignore[method-assign]
    assert decoder.decode(hostile.b64(framed))[2] == "out_of_memory"

    def bug(*_: object) -> None:
        raise KeyError("surprise")

    decoder._typed = bug  # type: ignore[method-assign]
    _, _, code, detail, _ = decoder.decode(hostile.b64(framed))
    assert code == "unexpected_error" and "KeyError" in detail


def test_an_unknown_uuid_is_asked_once_per_batch(registry: FileRegistry) -> None:
    version = registry.latest("unicorn_ride_request")
    fresh = FileRegistry(registry.path)
    decoder = RecordDecoder(StreamSpec("unicorn_rides", "unicorn_ride_request"), fresh, LIMITS)
    unknown = uuid.UUID(int=12345)
    payload = codec.encode_payload(unicorn_ride_request(1), version)
    lines = [
        (n, hostile.envelope(hostile.b64(wire.encode_glue(payload, unknown)), n), 0)
        for n in range(500)
    ]
    lines = [(n, line, len(line)) for n, line, _ in lines]
    cols = decode_lines_batch(lines, decoder)
    assert set(cols.codes) == {"unknown_schema"}
    assert fresh.lookups == 1
    with pytest.raises(UnknownSchemaError):  # still unknown, still not asked again
        fresh.get_by_uuid(unknown)
    assert fresh.lookups == 1
