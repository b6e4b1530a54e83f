"""The production decoder against the reference decoder: the same Arrow batches, bit for bit.

The reference (tests/decode/reference_decoder.py) is the decoder as it was before its
batch work (docs/decisions/0044-decode-and-checks-near-their-bounds.md). Both run over the
hostile corpus (tests/decode/hostile.py) and over every generated stream feed (good
records, schema violations, cast failures, bad envelopes); each decoder runs every
batch twice, so that both the cold path (headers not resolved yet) and the inline
fast path (headers cached) are compared. Pure Python, no Spark.
"""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pytest

from floe.decode import records
from floe.registry import codec
from floe.registry.backends import FileRegistry
from floe.registry.samples import unicorn_ride_request
from tests.decode import hostile
from tests.decode import reference_decoder as reference

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas" / "floe"
LIMITS = records.DecodeLimits(
    max_line_bytes=2 << 20, max_record_bytes=1 << 20, max_inflated_bytes=1 << 20, max_depth=128
)
REF_LIMITS = reference.DecodeLimits(**vars(LIMITS))
WEATHER = {"temperature": 60, "location": {"city": "Phoenix", "state": "Arizona"}, "timestamp": 1}
FIXED = {
    "_source_file": "f",
    "ingest_year": 2022,
    "ingest_month": 7,
    "ingest_day": 1,
    "ingest_hour": 0,
}


def _arrow_schema(record_type: object) -> pa.Schema:
    from pyspark.sql.pandas.types import to_arrow_schema

    from floe.decode.core import decode_output_schema

    return to_arrow_schema(decode_output_schema(record_type))  # type: ignore[arg-type]


def _schema_of(name: str, fmt: str, file: str) -> pa.Schema:
    from floe.registry.types import to_spark_type

    return _arrow_schema(to_spark_type((SCHEMAS / name / file).read_text(), fmt))


_ADDRESS = re.compile(r" at 0x[0-9a-f]+")


def _stable(batch: pa.RecordBatch) -> pa.RecordBatch:
    """``batch`` with object addresses in error details (fastavro names its buffer
    object, ``<_io.BytesIO object at 0x...>``) masked: they differ between any two runs."""
    index = batch.schema.get_field_index("error_detail")
    details = [
        None if d is None else _ADDRESS.sub(" at 0x…", d) for d in batch.column(index).to_pylist()
    ]
    return batch.set_column(index, "error_detail", pa.array(details, pa.string()))


def _triples(lines: list[bytes], max_line: int) -> list[tuple[int, bytes, int]]:
    return [(n, line[: max_line + 1], len(line)) for n, line in enumerate(lines)]


def _assert_same(
    triples: list[tuple[int, bytes, int]],
    new: records.RecordDecoder,
    old: reference.RecordDecoder,
    schema: pa.Schema,
    fixed: dict[str, object],
) -> int:
    """Both decoders over ``triples``, twice each (cold, then cached headers); the rows."""
    for attempt in ("cold", "warm"):
        got = _stable(
            records.to_record_batch(records.decode_lines_batch(triples, new), schema, fixed)
        )
        want = _stable(
            reference.to_record_batch(reference.decode_lines_batch(triples, old), schema, fixed)
        )
        assert got.schema == want.schema
        for name in schema.names:
            left, right = got.column(name), want.column(name)
            if not left.equals(right):
                diff = [
                    (i, a, b)
                    for i, (a, b) in enumerate(
                        zip(left.to_pylist(), right.to_pylist(), strict=True)
                    )
                    if a != b
                ]
                raise AssertionError(f"{attempt}: column {name} differs at {diff[:3]}")
        assert got.equals(want), attempt
    return got.num_rows


def test_hostile_avro_decodes_as_the_reference(registry: FileRegistry) -> None:
    version = registry.latest("unicorn_ride_request")
    spec = ("unicorn_rides", "unicorn_ride_request")
    good = unicorn_ride_request(3)
    # A smaller bomb than the hostile suite's: the cap (1 MiB) stops it all the same.
    framed = list(hostile.avro_corpus(version, good, hostile.zlib_bomb(8 << 20)))
    framed.append(("good", codec.frame(good, version)))
    lines = [line for _, line in hostile.lines_for(iter(framed), 0)]
    rows = _assert_same(
        _triples(lines, LIMITS.max_line_bytes),
        records.RecordDecoder(records.StreamSpec(*spec), registry, LIMITS),
        reference.RecordDecoder(reference.StreamSpec(*spec), registry, REF_LIMITS),
        _schema_of("unicorn_ride_request", "AVRO", "v1.avsc"),
        FIXED,
    )
    assert rows == len(lines)


def test_hostile_json_and_envelopes_decode_as_the_reference(registry: FileRegistry) -> None:
    version = registry.latest("weather_report")
    huge = LIMITS.max_record_bytes + LIMITS.max_record_bytes // 5
    corpus = hostile.json_corpus(version, WEATHER, hostile.zlib_bomb(8 << 20), huge)
    lines = [line for _, line in hostile.lines_for(corpus, 0)]
    good_data = hostile.b64(codec.frame(WEATHER, version))
    lines += [line for _, line in hostile.envelope_corpus(good_data, 1000, LIMITS.max_line_bytes)]
    spec = ("weather", "weather_report")
    rows = _assert_same(
        _triples(lines, LIMITS.max_line_bytes),
        records.RecordDecoder(records.StreamSpec(*spec), registry, LIMITS),
        reference.RecordDecoder(reference.StreamSpec(*spec), registry, REF_LIMITS),
        _schema_of("weather_report", "JSON", "v2.json"),
        FIXED,
    )
    assert rows == len(lines)


def test_generated_streams_decode_as_the_reference(tmp_path: Path) -> None:
    """Every stream feed of the demo, with its bad records (1 in 10 here)."""
    from floe.decode.core import piece_lines
    from floe.feeds import load_feeds
    from floe.feeds.kinds import stream
    from floe.generator import GenerateOptions, generate
    from floe.registry.backends import RegistryRef
    from tests.helpers import ROOT

    feeds = [f for f in load_feeds(ROOT) if f.kind == "stream"]
    assert feeds
    state = tmp_path / "state"
    opts = GenerateOptions(
        landing=tmp_path / "landing",
        days=1,
        scale=1500,
        bad_share=0.1,
        project_dir=ROOT,
        state_dir=state,
    )
    generate(opts, [f.name for f in feeds])
    registry = RegistryRef(backend="local", registry_dir=str(state / "registry")).open()
    limits = records.DecodeLimits()
    compared = quarantined = 0
    for feed in feeds:
        spec = stream.spec(feed)
        new = records.RecordDecoder(spec, registry, limits)
        old = reference.RecordDecoder(
            reference.StreamSpec(spec.name, spec.schema, spec.registry, dict(spec.timestamps)),
            registry,
            reference.DecodeLimits(),
        )
        schema = _arrow_schema(stream.record_type(feed, ROOT))
        for f in stream.discover(feed, opts.landing):
            triples, _ = piece_lines(str(f.path), 0, f.size, f.size, limits.max_line_bytes)
            compared += _assert_same(triples, new, old, schema, {"_source_file": f.key, **f.attrs})
            codes = records.decode_lines_batch(triples, new).codes
            quarantined += sum(code is not None for code in codes)
    assert compared > 0 and quarantined > 0  # bad records were in the comparison


def test_the_collector_is_paused_for_a_batch_and_restored_after(registry: FileRegistry) -> None:
    import gc

    seen: list[bool] = []
    decoder = records.RecordDecoder(
        records.StreamSpec("unicorn_rides", "unicorn_ride_request"), registry, LIMITS
    )
    decode = decoder.decode

    def spy(data: str) -> tuple:
        seen.append(gc.isenabled())
        return decode(data)

    decoder.decode = spy  # type: ignore[method-assign]
    line = hostile.envelope(hostile.b64(b"\x03\x00" + bytes(16)), 1)
    assert gc.isenabled()
    records.decode_lines_batch([(0, line, len(line))], decoder)
    assert seen == [False] and gc.isenabled()
    with pytest.raises(RuntimeError), records.gc_paused():
        raise RuntimeError("a batch that fails")
    assert gc.isenabled()
    gc.disable()  # a caller that turned it off itself keeps it off
    try:
        with records.gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
