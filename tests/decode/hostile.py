"""A corpus of hostile landed lines for a stream: every way a record can be wrong.

Each entry is ``(label, line bytes, expected code or None)``: ``None`` means the line
must decode into the raw table. The corpus is generated (not stored): truncations at
every byte of a frame, wrong header bytes, zlib bombs, invalid UTF-8, huge and deep
JSON, NaN/Infinity, Avro enum/union indexes out of range, huge and negative lengths,
varint overflow, trailing bytes, redelivered sequence numbers.
"""

from __future__ import annotations

import base64
import json
import uuid
import zlib
from collections.abc import Iterator

from floe.registry import codec, wire
from floe.registry.backends import SchemaVersion

ANY_CODE = object()  # quarantined, whatever the code (the bytes decide which step fails)
BOMB_BYTES = 1 << 30  # what the bomb inflates to: 1 GiB of zeros


def envelope(data: object, seq: int, **extra: object) -> bytes:
    body: dict[str, object] = {
        "sequenceNumber": str(10**20 + seq),
        "partitionKey": f"key-{seq % 4}",
        "approximateArrivalTimestamp": "2022-07-01T00:00:00.000Z",
        **extra,
    }
    if data is not None:
        body["data"] = data
    return json.dumps(body, separators=(",", ":")).encode()


def b64(framed: bytes) -> str:
    return base64.b64encode(framed).decode()


def zlib_bomb(size: int = BOMB_BYTES) -> bytes:
    """A zlib stream of ``size`` zero bytes (about 1 MB for 1 GiB), built in chunks."""
    deflate = zlib.compressobj(9)
    chunk = bytes(1 << 20)
    parts = [deflate.compress(chunk) for _ in range(size // len(chunk))]
    parts.append(deflate.flush())
    return b"".join(parts)


def avro_corpus(version: SchemaVersion, good: dict, bomb: bytes) -> Iterator[tuple[str, bytes]]:
    """(label, framed bytes) of hostile Glue-framed Avro records; codes by the caller."""
    framed = codec.frame(good, version)
    header = framed[:18]
    payload = framed[18:]
    # truncations at every byte of the frame (header and payload)
    for cut in range(len(framed)):
        yield f"avro cut at {cut}", framed[:cut]
    yield "avro trailing bytes", framed + b"\x00\x01"
    # wrong header bytes
    for byte in (0x01, 0x02, 0x04, 0x7F, 0xFF):
        yield f"header byte {byte:#x}", bytes((byte,)) + framed[1:]
    for byte in (0x01, 0x04, 0x06, 0xFF):
        yield f"compression byte {byte:#x}", framed[:1] + bytes((byte,)) + framed[2:]
    yield "unknown uuid", framed[:2] + uuid.UUID(int=7).bytes + payload
    yield "confluent frame", wire.encode_confluent(payload, 42)
    # zlib: bomb, cut stream, trailing garbage
    yield "zlib bomb", bytes((3, 5)) + header[2:] + bomb
    deflated = zlib.compress(payload)
    yield "zlib cut", bytes((3, 5)) + header[2:] + deflated[:-3]
    yield "zlib trailing", bytes((3, 5)) + header[2:] + deflated + b"xx"
    yield "zlib good", bytes((3, 5)) + header[2:] + deflated
    # Avro internals: request_id is the first field (an int), then pickup_address (string)
    yield "varint overflow", header + b"\xff" * 12 + payload[1:]
    yield "huge string length", header + b"\x02" + b"\xfe\xff\xff\xff\xff\xff\xff\xff\x7f"
    yield "negative string length", header + b"\x02" + b"\x09" + b"abc"
    # enum and union indexes out of range, at their offsets in the payload
    enum_at = _enum_offset(good)
    yield "enum index out of range", header + payload[:enum_at] + b"\x7e" + payload[enum_at + 1 :]
    union_at = enum_at + 1 + len(_zigzag(good["recommended_unicorn"]["unicorn_id"])) + 1
    yield (
        "union index out of range",
        header + payload[:union_at] + b"\x12" + payload[union_at + 1 :],
    )


def _zigzag(n: int) -> bytes:
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | 0x80 if n else low)
        if not n:
            return bytes(out)


def _enum_offset(record: dict) -> int:
    """Byte offset of UnicornRideRequest's preferred_unicorn_color in its Avro encoding."""
    strings = [record["pickup_address"].encode(), record["destination_address"].encode()]
    return (
        len(_zigzag(record["request_id"]))
        + sum(len(_zigzag(len(s))) + len(s) for s in strings)
        + 4  # float ride_fare
        + len(_zigzag(record["ride_duration"]))
    )


def json_corpus(
    version: SchemaVersion, good: dict, bomb: bytes, huge: int
) -> Iterator[tuple[str, bytes]]:
    """(label, framed bytes) of hostile Glue-framed JSON records."""
    glue = version.uuid

    def frame(payload: bytes, compress: bool = False) -> bytes:
        return wire.encode_glue(payload, glue, compress=compress)

    text = json.dumps(good).encode()
    for cut in range(0, len(text), max(1, len(text) // 12)):
        yield f"json cut at {cut}", frame(text[:cut])
    yield "json NaN", frame(text.replace(b"}", b',"x": NaN}', 1))
    yield "json Infinity", frame(b'{"temperature": Infinity}')
    yield "json -Infinity", frame(b'{"temperature": -Infinity}')
    yield "json invalid utf-8", frame(b'{"location": {"city": "\xff\xfe", "state": "x"}}')
    yield "json lone surrogate", frame(b'{"location": {"city": "\\ud800", "state": "x"}}')
    yield "json 100000 deep", frame(b"[" * 100_000 + b"]" * 100_000)
    yield "json 500 deep object", frame(b'{"a":' * 500 + b"1" + b"}" * 500)
    yield "json huge", frame(b'{"temperature": 1, "pad": "' + b"x" * huge + b'"}')
    yield "json zlib bomb", bytes((3, 5)) + glue.bytes + bomb
    yield "json compressed good", frame(text, compress=True)
    yield "json schema violation", frame(json.dumps({**good, "temperature": "hot"}).encode())
    yield "json bigint overflow", frame(json.dumps({**good, "timestamp": 2**70}).encode())
    yield "json array root", frame(b"[1, 2, 3]")
    yield "json trailing garbage", frame(text + b" }")


def lines_for(framed: Iterator[tuple[str, bytes]], first_seq: int) -> Iterator[tuple[str, bytes]]:
    """Each framed record as an envelope line, numbered from ``first_seq``."""
    for n, (label, data) in enumerate(framed):
        yield label, envelope(b64(data), first_seq + n)


def envelope_corpus(good_data: str, first_seq: int, max_line: int) -> Iterator[tuple[str, bytes]]:
    """Lines whose envelope (not payload) is hostile."""
    yield "not json", b"this is not json"
    yield "json but no data", envelope(None, first_seq)
    yield "data not a string", envelope(12, first_seq + 1)
    yield "array envelope", b"[1,2]"
    yield "invalid utf-8 envelope", envelope(good_data, first_seq + 2)[:-2] + b'\xff\xfe"}'
    yield "NaN in envelope", envelope(good_data, first_seq + 3)[:-1] + b',"x":NaN}'
    yield "bad base64", envelope(good_data[:-3] + "!@#", first_seq + 4)
    yield "base64 no padding", envelope(good_data.rstrip("="), first_seq + 5)
    yield "deep envelope", b"[" * 100_000 + b"]" * 100_000
    yield "line too long", envelope("A" * (max_line + 10), first_seq + 6)
    yield "whitespace line", b"   "
    yield "cut envelope", envelope(good_data, first_seq + 7)[:40]


# label -> expected code (None: decodes into the raw table); labels with a number
# (cuts) are matched by prefix below.
AVRO_EXPECTED = {
    "avro trailing bytes": "avro_decode",
    "unknown uuid": "unknown_schema",
    "confluent frame": "unknown_schema",
    "zlib bomb": "inflate_limit",
    "zlib cut": "bad_zlib",
    "zlib trailing": "bad_zlib",
    "zlib good": None,
    "huge string length": "avro_decode",
    "negative string length": "avro_decode",
    "enum index out of range": "avro_decode",
    "union index out of range": "avro_decode",
}
JSON_EXPECTED = {
    "json NaN": "json_parse",
    "json Infinity": "json_parse",
    "json -Infinity": "json_parse",
    "json invalid utf-8": "json_parse",
    "json lone surrogate": "json_parse",
    "json 100000 deep": "too_deep",
    "json 500 deep object": "too_deep",
    "json huge": "record_too_large",
    "json zlib bomb": "inflate_limit",
    "json compressed good": None,
    "json schema violation": "schema_violation",
    "json bigint overflow": "cast_failure",
    "json array root": "schema_violation",
    "json trailing garbage": "json_parse",
}
ENVELOPE_EXPECTED = {
    "not json": "bad_envelope",
    "json but no data": "bad_envelope",
    "data not a string": "bad_envelope",
    "array envelope": "bad_envelope",
    "invalid utf-8 envelope": "bad_envelope",
    "NaN in envelope": "bad_envelope",
    "bad base64": "bad_base64",
    "base64 no padding": "bad_base64",
    "deep envelope": "bad_envelope",
    "line too long": "line_too_long",
    "whitespace line": "bad_envelope",
    "cut envelope": "bad_envelope",
}


def expected_avro(label: str) -> object:
    if label.startswith("avro cut at "):
        cut = int(label.rsplit(" ", 1)[1])
        return "truncated" if cut < 18 else "avro_decode"
    if label.startswith("header byte"):
        return "bad_header"
    if label.startswith("compression byte"):
        return "unknown_compression"
    if label == "varint overflow":
        return ANY_CODE
    return AVRO_EXPECTED[label]


def expected_json(label: str) -> str | None:
    if label.startswith("json cut at "):
        return "json_parse"
    return JSON_EXPECTED[label]
