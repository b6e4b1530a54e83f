"""Property tests of the Glue / Confluent framing: round trips and corruption handling.

"Detected or decodes to the same bytes": a framing has no checksum of its own, so a
flipped byte in an uncompressed payload cannot be noticed by the framing; the
properties below pin down exactly what the decoder promises instead.
"""

from __future__ import annotations

import uuid
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from floe.registry import wire

payloads = st.binary(max_size=300)
uuids = st.uuids()
fast = settings(max_examples=60, deadline=None)


@fast
@given(payloads, uuids, st.booleans())
def test_glue_round_trip(payload: bytes, version: uuid.UUID, compress: bool) -> None:
    framed = wire.encode_glue(payload, version, compress=compress)
    assert framed[0] == 0x03
    assert framed[1] == (0x05 if compress else 0x00)
    assert framed[2:18] == version.bytes
    frame = wire.decode_glue(framed)
    assert frame == wire.GlueFrame(version, payload, compress)
    assert wire.decode(framed) == frame


@fast
@given(payloads, st.integers(min_value=0, max_value=2**32 - 1))
def test_confluent_round_trip(payload: bytes, schema_id: int) -> None:
    framed = wire.encode_confluent(payload, schema_id)
    assert framed[:5] == b"\x00" + schema_id.to_bytes(4, "big")
    assert wire.decode_confluent(framed) == wire.ConfluentFrame(schema_id, payload)
    assert wire.decode(framed) == wire.ConfluentFrame(schema_id, payload)


def _decode_or_error(data: bytes) -> wire.GlueFrame | wire.WireFormatError:
    try:
        return wire.decode_glue(data)
    except wire.WireFormatError as exc:  # anything else escapes and fails the test
        return exc


@settings(max_examples=25, deadline=None)
@given(st.binary(min_size=1, max_size=120), uuids, st.integers(min_value=1, max_value=255))
def test_every_single_byte_corruption_of_a_zlib_frame(
    payload: bytes, version: uuid.UUID, delta: int
) -> None:
    """zlib frames carry an Adler-32: every corruption of the header or body is either an
    error with a code, or decodes to the original payload (e.g. padding bits, the
    FLEVEL hint). A UUID corruption yields another UUID (caught by the registry lookup);
    0x05→0x00 yields the raw body, which the payload decoder then rejects."""
    framed = wire.encode_glue(payload, version, compress=True)
    for i in range(len(framed)):
        corrupted = bytearray(framed)
        corrupted[i] = (corrupted[i] + delta) % 256
        result = _decode_or_error(bytes(corrupted))
        if isinstance(result, wire.WireFormatError):
            assert result.code in {"bad_header", "unknown_compression", "bad_zlib"}
            continue
        if i == 1:  # became 0x00: the compressed body is passed through untouched
            assert result.payload == framed[18:] and not result.compressed
        elif 2 <= i < 18:
            assert result.payload == payload and result.schema_version_id != version
        else:
            assert result.payload == payload and result.schema_version_id == version


@fast
@given(payloads, uuids, st.integers(min_value=1, max_value=255))
def test_every_single_byte_corruption_of_a_plain_frame(
    payload: bytes, version: uuid.UUID, delta: int
) -> None:
    """Uncompressed: header corruption is an error (or 0x00→0x05, then bad zlib); a
    corrupted UUID or payload byte is passed through faithfully — re-encoding the
    decoded frame reproduces exactly the bytes that arrived."""
    framed = wire.encode_glue(payload, version)
    for i in range(len(framed)):
        corrupted = bytearray(framed)
        corrupted[i] = (corrupted[i] + delta) % 256
        result = _decode_or_error(bytes(corrupted))
        if i < 2:
            assert isinstance(result, wire.WireFormatError), (i, result)
            continue
        assert not isinstance(result, wire.WireFormatError)
        assert wire.encode_glue(result.payload, result.schema_version_id) == bytes(corrupted)


@fast
@given(payloads, uuids, st.booleans())
def test_every_truncation(payload: bytes, version: uuid.UUID, compress: bool) -> None:
    framed = wire.encode_glue(payload, version, compress=compress)
    for n in range(len(framed)):
        result = _decode_or_error(framed[:n])
        if n < 18:
            assert isinstance(result, wire.TruncatedError), n
        elif compress:
            # A cut zlib stream never decodes to a silent prefix.
            assert isinstance(result, wire.BadZlibError), n
        else:
            assert result == wire.GlueFrame(version, payload[: n - 18], False)


@fast
@given(payloads, st.integers(min_value=0, max_value=2**32 - 1))
def test_confluent_truncation(payload: bytes, schema_id: int) -> None:
    framed = wire.encode_confluent(payload, schema_id)
    for n in range(5):
        with pytest.raises(wire.TruncatedError):
            wire.decode_confluent(framed[:n])


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (b"", "truncated"),
        (b"\x02\x00" + bytes(16), "bad_header"),
        (b"\x03", "truncated"),
        (b"\x03\x01" + bytes(16), "unknown_compression"),
        (b"\x03\x00" + bytes(15), "truncated"),
        (b"\x03\x05" + bytes(16) + b"not zlib", "bad_zlib"),
        (b"\x03\x05" + bytes(16) + zlib.compress(b"x") + b"junk", "bad_zlib"),
    ],
)
def test_error_codes_are_stable(data: bytes, code: str) -> None:
    with pytest.raises(wire.WireFormatError) as excinfo:
        wire.decode_glue(data)
    assert excinfo.value.code == code
    assert str(excinfo.value)  # a readable detail for raw.quarantine


def test_decode_dispatches_on_first_byte() -> None:
    with pytest.raises(wire.BadHeaderError):
        wire.decode(b"\x7b\x22a\x22: 1}")  # plain JSON, no framing


@pytest.mark.parametrize("text", ["not base64!", "abc", "YWJj\x00"])
def test_decode_base64_rejects_garbage(text: str) -> None:
    with pytest.raises(wire.WireFormatError) as excinfo:
        wire.decode_base64(text)
    assert excinfo.value.code == "bad_base64"


@fast
@given(st.binary(max_size=100))
def test_decode_base64_round_trip(data: bytes) -> None:
    import base64

    assert wire.decode_base64(base64.b64encode(data)) == data
    assert wire.decode_base64(base64.b64encode(data).decode()) == data
