"""Wire formats that carry a schema reference in front of each record (``docs/registry.md``).

Two framings reach floe:

* AWS Glue Schema Registry SerDe: ``0x03`` header version, one compression byte
  (``0x00`` none, ``0x05`` zlib), the 16-byte schema version UUID, then the payload
  (zlib-compressed when the compression byte says so).
* Confluent: ``0x00`` magic byte and a 4-byte big-endian schema id, then the payload.

Decoding never raises anything but a :class:`WireFormatError` subclass, each with a
stable ``code``: ingestion quarantines bad records by that code, so the codes are part
of the contract and must not be renamed.
"""

from __future__ import annotations

import base64
import binascii
import struct
import uuid
import zlib
from dataclasses import dataclass

GLUE_HEADER_VERSION = 0x03
COMPRESSION_NONE = 0x00
COMPRESSION_ZLIB = 0x05
CONFLUENT_MAGIC = 0x00

GLUE_HEADER_LEN = 18  # version byte + compression byte + 16-byte UUID
CONFLUENT_HEADER_LEN = 5  # magic byte + 4-byte id


class WireFormatError(ValueError):
    """A framed record that cannot be unframed; ``code`` says why (stable)."""

    code = "wire_format"

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class BadBase64Error(WireFormatError):
    code = "bad_base64"


class BadHeaderError(WireFormatError):
    code = "bad_header"


class UnknownCompressionError(WireFormatError):
    code = "unknown_compression"


class TruncatedError(WireFormatError):
    code = "truncated"


class BadZlibError(WireFormatError):
    code = "bad_zlib"


class InflateLimitError(WireFormatError):
    """A zlib payload that inflates past the cap (a decompression bomb, or a cap too low)."""

    code = "inflate_limit"


@dataclass(frozen=True)
class GlueFrame:
    """A decoded Glue SerDe frame; ``payload`` is already decompressed."""

    schema_version_id: uuid.UUID
    payload: bytes
    compressed: bool


@dataclass(frozen=True)
class ConfluentFrame:
    schema_id: int
    payload: bytes


def encode_glue(
    payload: bytes, schema_version_id: uuid.UUID | str, compress: bool = False
) -> bytes:
    """Frame ``payload`` the way the Glue SerDe does (zlib when ``compress``)."""
    version = (
        schema_version_id
        if isinstance(schema_version_id, uuid.UUID)
        else uuid.UUID(str(schema_version_id))
    )
    body = zlib.compress(payload) if compress else payload
    compression = COMPRESSION_ZLIB if compress else COMPRESSION_NONE
    return bytes((GLUE_HEADER_VERSION, compression)) + version.bytes + body


def decode_glue(data: bytes, max_inflated: int | None = None) -> GlueFrame:
    """Unframe a Glue SerDe record, raising a typed :class:`WireFormatError`."""
    if not data:
        raise TruncatedError("empty record: expected an 18-byte Glue header")
    if data[0] != GLUE_HEADER_VERSION:
        raise BadHeaderError(
            f"header byte 0x{data[0]:02x} is not the Glue header version 0x03 "
            "(was the record written by another serializer?)"
        )
    if len(data) < 2:
        raise TruncatedError("record ends after the header byte: no compression byte")
    compression = data[1]
    if compression not in (COMPRESSION_NONE, COMPRESSION_ZLIB):
        raise UnknownCompressionError(
            f"compression byte 0x{compression:02x} is neither 0x00 (none) nor 0x05 (zlib)"
        )
    if len(data) < GLUE_HEADER_LEN:
        raise TruncatedError(
            f"record is {len(data)} bytes: shorter than the 18-byte header (UUID cut off)"
        )
    version = uuid.UUID(bytes=bytes(data[2:GLUE_HEADER_LEN]))
    body = bytes(data[GLUE_HEADER_LEN:])
    if compression == COMPRESSION_ZLIB:
        body = inflate(body, max_inflated)
    return GlueFrame(version, body, compression == COMPRESSION_ZLIB)


def inflate(body: bytes, max_inflated: int | None = None) -> bytes:
    """Inflate one complete zlib stream, producing at most ``max_inflated`` bytes.

    decompressobj (not zlib.decompress) so trailing garbage and a missing end of
    stream are both errors: a truncated stream must never decode to a prefix. The cap
    is enforced while inflating (``max_length``): a 1 GiB bomb costs the worker
    ``max_inflated`` bytes, never a gigabyte.
    """
    inflater = zlib.decompressobj()
    try:
        if max_inflated is None:
            out = inflater.decompress(body)
        else:
            out = inflater.decompress(body, max_inflated + 1)
    except zlib.error as exc:
        raise BadZlibError(f"zlib payload does not inflate: {exc}") from exc
    if max_inflated is not None and (len(out) > max_inflated or inflater.unconsumed_tail):
        raise InflateLimitError(
            f"zlib payload of {len(body)} bytes inflates past the cap of {max_inflated} bytes "
            "(FLOE_DECODE_MAX_INFLATED_BYTES)"
        )
    if not inflater.eof:
        raise BadZlibError("zlib payload is truncated (stream has no end marker)")
    if inflater.unused_data:
        raise BadZlibError(f"{len(inflater.unused_data)} bytes follow the end of the zlib stream")
    return out


def encode_confluent(payload: bytes, schema_id: int) -> bytes:
    """Frame ``payload`` with the Confluent magic byte and a 4-byte schema id."""
    if not 0 <= schema_id < 2**32:
        raise ValueError(f"Confluent schema id {schema_id} does not fit in 4 unsigned bytes")
    return bytes((CONFLUENT_MAGIC,)) + struct.pack(">I", schema_id) + payload


def decode_confluent(data: bytes) -> ConfluentFrame:
    if not data:
        raise TruncatedError("empty record: expected a 5-byte Confluent header")
    if data[0] != CONFLUENT_MAGIC:
        raise BadHeaderError(f"magic byte 0x{data[0]:02x} is not the Confluent magic 0x00")
    if len(data) < CONFLUENT_HEADER_LEN:
        raise TruncatedError(f"record is {len(data)} bytes: the 4-byte schema id is cut off")
    (schema_id,) = struct.unpack(">I", bytes(data[1:CONFLUENT_HEADER_LEN]))
    return ConfluentFrame(schema_id, bytes(data[CONFLUENT_HEADER_LEN:]))


def decode(data: bytes, max_inflated: int | None = None) -> GlueFrame | ConfluentFrame:
    """Unframe either format, dispatching on the first byte (zlib capped at ``max_inflated``)."""
    if data and data[0] == CONFLUENT_MAGIC:
        return decode_confluent(data)
    return decode_glue(data, max_inflated)


def decode_base64(text: str | bytes) -> bytes:
    """Strict base64 (landing files carry records base64-encoded); code ``bad_base64``."""
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError, TypeError) as exc:
        raise BadBase64Error(f"record is not valid base64: {exc}") from exc
