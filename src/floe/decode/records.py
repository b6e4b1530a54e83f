"""One landed line -> one typed record or one quarantine code; a batch -> Arrow columns.

Pure Python, no Spark: the functions here run in executors' Python workers
(:mod:`floe.decode.core` wires them into Spark) and in tests directly.

Every line yields exactly one result. A line either decodes into a record of the
stream's schema, or carries a stable code and a readable detail (docs/feeds.md,
"Hostile input"). Nothing a single record holds can stop the batch: the caps of
:class:`DecodeLimits` bound what one record may cost (line length, framed size,
inflated size, JSON depth), and anything unexpected — ``RecursionError``,
``MemoryError``, a bug — is caught per record and quarantined with its own code.
"""

from __future__ import annotations

import binascii
import gc
import io
import re
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

    from floe.registry.backends import Registry
    from floe.runtime.settings import Settings

# Codes beyond the codec's (floe.registry.codec.DECODE_ERRORS); stable, never renamed.
BAD_ENVELOPE = "bad_envelope"  # the line is not a Kinesis envelope with a data field
WRONG_SCHEMA = "wrong_schema"  # a registered schema, but not this stream's
CAST_FAILURE = "cast_failure"  # decodes and validates, but the Spark type cannot hold it
LINE_TOO_LONG = "line_too_long"  # the landed line is longer than the cap
RECORD_TOO_LARGE = "record_too_large"  # the framed record is larger than the cap
TOO_DEEP = "too_deep"  # nesting beyond the cap, or the decoder ran out of stack
OUT_OF_MEMORY = "out_of_memory"  # the record could not be decoded in the worker's memory
UNEXPECTED = "unexpected_error"  # anything else raised while decoding one record
DUPLICATE = "duplicate"  # its sequence number was already ingested for the stream

# Every code a quarantined stream record can carry (docs/feeds.md lists them too).
CODES = (
    BAD_ENVELOPE,
    LINE_TOO_LONG,
    "bad_base64",
    RECORD_TOO_LARGE,
    "bad_header",
    "unknown_compression",
    "truncated",
    "bad_zlib",
    "inflate_limit",
    "unknown_schema",
    WRONG_SCHEMA,
    "avro_decode",
    "json_parse",
    TOO_DEEP,
    "schema_violation",
    CAST_FAILURE,
    DUPLICATE,
    OUT_OF_MEMORY,
    UNEXPECTED,
)

RAW_PREFIX = 1024  # characters of an over-long line kept in raw_data
DETAIL_LIMIT = 2000  # characters of an error detail


@dataclass(frozen=True)
class DecodeLimits:
    """What one record may cost a worker (``Settings.decode_max_*``)."""

    max_line_bytes: int = 16 * 1024 * 1024
    max_record_bytes: int = 10 * 1024 * 1024
    max_inflated_bytes: int = 10 * 1024 * 1024
    max_depth: int = 128

    @classmethod
    def from_settings(cls, settings: Settings) -> DecodeLimits:
        return cls(
            max_line_bytes=settings.decode_max_line_bytes,
            max_record_bytes=settings.decode_max_record_bytes,
            max_inflated_bytes=settings.decode_max_inflated_bytes,
            max_depth=settings.decode_max_depth,
        )


@dataclass(frozen=True)
class StreamSpec:
    """What the decoder needs of a stream feed: its name, registry schema, typing rules."""

    name: str
    schema: str
    registry: str = "floe"
    # Top-level string fields the raw table holds as timestamps (strptime format):
    # the seed's ApplyMapping casts ventilator `eventtime` string -> timestamp.
    timestamps: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class _Resolved:
    """A header that resolved to a version of this stream's schema."""

    avro: Any  # fastavro parsed schema, or None for JSON
    version: Any  # SchemaVersion
    compressed: bool
    validate: Any = None  # JSON: the compiled validator (raises on a violation)
    number: int = 0  # the version number (a plain attribute: read once per record)
    proto: bool = False  # PROTOBUF: decoded by codec.decode_payload (no inline path)


@dataclass(frozen=True)
class _Refused:
    """A header that resolves to an error every record framed with it shares."""

    code: str
    detail: str
    number: int | None = None


def _short(text: str) -> str:
    return text if len(text) <= DETAIL_LIMIT else text[:DETAIL_LIMIT] + "…"


def _unexpected(exc: BaseException) -> tuple[str, str]:
    """The code and detail of an exception no decode step expected."""
    if isinstance(exc, RecursionError):
        return TOO_DEEP, f"the decoder ran out of stack: {exc}"
    if isinstance(exc, MemoryError):
        return OUT_OF_MEMORY, "the record does not fit in the worker's memory"
    return UNEXPECTED, _short(f"{type(exc).__name__}: {exc}")


class RecordDecoder:
    """Decodes the ``data`` of envelopes of one stream, resolving headers once.

    ``registry`` is the configured backend (its own cache holds every UUID it was asked
    for, found or not); this object adds a cache by raw header bytes, so the common
    record costs one dict lookup before fastavro or the JSON parser runs.
    """

    def __init__(self, spec: StreamSpec, registry: Registry, limits: DecodeLimits) -> None:
        self.spec = spec
        self.registry = registry
        self.limits = limits
        self.headers: dict[bytes, _Resolved | _Refused] = {}
        self.max_base64 = (limits.max_record_bytes + 2) // 3 * 4

    # -- headers

    def resolve(self, header: bytes) -> _Resolved | _Refused:
        """The version an 18-byte Glue header names (cached; registry errors propagate)."""
        hit = self.headers.get(header)
        if hit is None:
            hit = self._resolve(header)
            self.headers[header] = hit
        return hit

    def _resolve(self, header: bytes) -> _Resolved | _Refused:
        from floe.registry import codec
        from floe.registry.backends import UnknownSchemaError

        try:
            version = self.registry.get_by_uuid(uuid.UUID(bytes=bytes(header[2:18])))
        except UnknownSchemaError as exc:
            return _Refused(exc.code, exc.detail)
        if version.name != self.spec.schema:
            detail = f"schema {version.name} v{version.version_number} is not {self.spec.schema}"
            return _Refused(WRONG_SCHEMA, detail, version.version_number)
        if version.data_format == "AVRO":
            parsed = codec._avro_schema(version.definition)
            return _Resolved(parsed, version, header[1] == 5, None, version.version_number)
        if version.data_format == "JSON":
            validator = codec._json_validator(version.definition)  # compiled once, here
            return _Resolved(None, version, header[1] == 5, validator, version.version_number)
        if version.data_format == "PROTOBUF":
            return _Resolved(None, version, header[1] == 5, None, version.version_number, True)
        return _Refused(
            "unknown_schema", f"schema {version.name} has data format {version.data_format!r}"
        )

    # -- one record

    def decode(self, data: str) -> tuple[Any, int | None, str | None, str | None, bytes | None]:
        """(record, version number, code, detail, framed bytes) of one envelope's ``data``."""
        try:
            return self._decode(data)
        except (RecursionError, MemoryError, Exception) as exc:
            # RegistryUnavailableError must fail the build, not quarantine the record.
            from floe.registry.backends import RegistryUnavailableError

            if isinstance(exc, RegistryUnavailableError):
                raise
            code, detail = _unexpected(exc)
            return None, None, code, detail, None

    def _decode(self, data: str) -> tuple[Any, int | None, str | None, str | None, bytes | None]:
        from floe.registry import codec, wire

        limits = self.limits
        if len(data) > self.max_base64:
            detail = (
                f"record of about {len(data) * 3 // 4} bytes is larger than the cap of "
                f"{limits.max_record_bytes} bytes (FLOE_DECODE_MAX_RECORD_BYTES)"
            )
            return None, None, RECORD_TOO_LARGE, detail, None
        try:
            framed = binascii.a2b_base64(data, strict_mode=True)
        except (binascii.Error, ValueError) as exc:
            return None, None, "bad_base64", f"record is not valid base64: {exc}", None
        if len(framed) > limits.max_record_bytes:
            detail = (
                f"record of {len(framed)} bytes is larger than the cap of "
                f"{limits.max_record_bytes} bytes (FLOE_DECODE_MAX_RECORD_BYTES)"
            )
            return None, None, RECORD_TOO_LARGE, detail, framed
        if len(framed) < 18 or framed[0] != 0x03 or framed[1] not in (0x00, 0x05):
            # Not a well-formed Glue header: the general path names what is wrong
            # (Confluent frames, truncations, bad header and compression bytes).
            try:
                version, record = codec.unframe(
                    framed,
                    self.registry,
                    max_inflated=limits.max_inflated_bytes,
                    max_depth=limits.max_depth,
                )
            except codec.DECODE_ERRORS as exc:
                code = getattr(exc, "code", UNEXPECTED)
                return None, None, code, _short(str(getattr(exc, "detail", exc))), framed
            if version.name != self.spec.schema:
                detail = (
                    f"schema {version.name} v{version.version_number} is not {self.spec.schema}"
                )
                return None, version.version_number, WRONG_SCHEMA, detail, framed
            return self._typed(record, version.version_number, framed)
        entry = self.resolve(framed[:18])
        if isinstance(entry, _Refused):
            return None, entry.number, entry.code, entry.detail, framed
        try:
            if entry.compressed:
                payload = wire.inflate(framed[18:], limits.max_inflated_bytes)
            else:
                payload = framed[18:]
            version = entry.version
            if entry.avro is not None or entry.proto:
                record = codec.decode_payload(payload, version)
            else:
                record = codec.parse_json(payload, limits.max_depth)
                codec.validate_json(record, version)
        except codec.DECODE_ERRORS as exc:
            code = getattr(exc, "code", UNEXPECTED)
            detail = _short(str(getattr(exc, "detail", exc)))
            return None, entry.number, code, detail, framed
        return self._typed(record, entry.number, framed)

    def _typed(
        self, record: Any, number: int, framed: bytes
    ) -> tuple[Any, int | None, str | None, str | None, bytes | None]:
        for name, fmt in self.spec.timestamps.items():
            value = record.get(name) if isinstance(record, dict) else None
            if value is None:
                continue
            try:
                record[name] = datetime.strptime(value, fmt)
            except (TypeError, ValueError) as exc:
                detail = _short(f"{name}: {value!r} is not a timestamp ({fmt}): {exc}")
                return None, number, CAST_FAILURE, detail, framed
        return record, number, None, None, framed


# --------------------------------------------------------------------------- batches

# Envelope fields, in output order, and the Kinesis names they come from.
ENVELOPE_FIELDS = (
    ("_sequence_number", "sequenceNumber"),
    ("_partition_key", "partitionKey"),
    ("_arrival", "approximateArrivalTimestamp"),
)


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return str(value)


_STRUCTURE = re.compile(rb'["{}\[\]]')
_SCALAR = re.compile(rb"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null")
_WHITESPACE = b" \t\r\n"
_BACKSLASH = 0x5C


def _skip_whitespace(buf: bytes, i: int) -> int:
    n = len(buf)
    while i < n and buf[i] in _WHITESPACE:
        i += 1
    return i


def _string_end(buf: bytes, i: int) -> int:
    """Index just past the JSON string starting at ``buf[i]`` (a quote); -1 if it is cut."""
    j = i + 1
    while True:
        k = buf.find(b'"', j)
        if k < 0:
            return -1
        b = k - 1
        while buf[b] == _BACKSLASH:
            b -= 1
        if (k - 1 - b) % 2 == 0:  # an even run of backslashes: the quote is not escaped
            return k + 1
        j = k + 1


def _container_end(buf: bytes, i: int) -> int:
    """Index just past the JSON object or array starting at ``buf[i]``; -1 if it is cut."""
    depth = 0
    at = i
    while True:
        m = _STRUCTURE.search(buf, at)
        if m is None:
            return -1
        c = buf[m.start()]
        if c == 0x22:  # a string: skip it whole (it may hold brackets)
            at = _string_end(buf, m.start())
            if at < 0:
                return -1
            continue
        depth += 1 if c in b"{[" else -1
        at = m.end()
        if depth == 0:
            return at


def scan_envelope_fields(line: bytes | memoryview, limit: int) -> dict[str, str]:
    """The envelope fields (``ENVELOPE_FIELDS``) readable in the first ``limit`` bytes
    of a line that is not a whole, valid envelope (too long, not JSON, no string data).

    A bounded, forward scan of the top-level object's members: values of other members
    (``data`` above all) are skipped without being parsed, by C-level searches; a
    member cut by the end of what is scanned, or anything that is not JSON, ends the
    scan with what was read so far. Only complete string or number values are taken.
    """
    import orjson

    buf = bytes(line[:limit])
    names = {kinesis: name for name, kinesis in ENVELOPE_FIELDS}
    found: dict[str, str] = {}
    n = len(buf)
    i = _skip_whitespace(buf, 0)
    if i >= n or buf[i] != 0x7B:  # not an object
        return found
    i += 1
    while True:
        i = _skip_whitespace(buf, i)
        if i < n and buf[i] == 0x2C:  # the comma between members
            i = _skip_whitespace(buf, i + 1)
        if i >= n or buf[i] != 0x22:  # the end of the object, a cut, or not JSON
            return found
        key_end = _string_end(buf, i)
        if key_end < 0:
            return found
        key = buf[i:key_end]
        i = _skip_whitespace(buf, key_end)
        if i >= n or buf[i] != 0x3A:  # ':'
            return found
        i = _skip_whitespace(buf, i + 1)
        if i >= n:
            return found
        token: bytes | None = None
        if buf[i] == 0x22:
            end = _string_end(buf, i)
            token = buf[i:end]
        elif buf[i] in b"{[":
            end = _container_end(buf, i)
        else:
            m = _SCALAR.match(buf, i)
            end = m.end() if m is not None and m.end() < n else -1  # at n: maybe cut
            token = m.group() if m is not None else None
        if end < 0:
            return found
        i = end
        try:
            name = names.get(orjson.loads(key))
            value = orjson.loads(token) if name is not None and token is not None else None
        except orjson.JSONDecodeError:
            continue  # not valid JSON text (bad UTF-8, a lone surrogate): not read
        text = _text(value)
        if name is not None and text is not None:
            found[name] = text


@dataclass
class BatchColumns:
    """The decoded columns of one batch of lines, before Arrow."""

    size: int
    offsets: list[Any]
    envelope: dict[str, list[Any]]
    records: list[Any]
    versions: list[Any]
    codes: list[Any]
    details: list[Any]
    raw_data: list[Any]
    raw_bytes: list[Any]
    texts: list[Any]  # every row's envelope data text (references; for cast failures)


def _carry_envelope(out: BatchColumns, i: int, fields: Mapping[str, str | None]) -> None:
    for name, value in fields.items():
        out.envelope[name][i] = value


def _line_text(line: bytes | memoryview) -> str:
    return bytes(line).decode("utf-8", "replace")


@contextmanager
def gc_paused() -> Iterator[None]:
    """Python's cyclic collector off for one batch (restored after, even on error).

    A batch allocates thousands of dicts and lists (the decoded records, then their
    Arrow conversion) and keeps them alive until the batch is written: with the
    collector on, every few hundred allocations start a collection that walks all of
    them again — measured at a third of fastavro's own time per record
    (docs/decisions/0044-decode-and-checks-near-their-bounds.md). Decoded records hold no
    reference cycles, so nothing waits for the collector: they are freed by reference
    counting as before, and whatever cycles an exception leaves are collected by the
    first collection after the batch.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def decode_lines_batch(
    lines: Sequence[tuple[int, bytes | memoryview, int]], decoder: RecordDecoder
) -> BatchColumns:
    """Decode ``(offset, line, length)`` triples (``line`` is a prefix when ``length``
    exceeds it: the line was longer than the cap and was not kept)."""
    with gc_paused():
        return _decode_lines_batch(lines, decoder)


def _decode_lines_batch(
    lines: Sequence[tuple[int, bytes | memoryview, int]], decoder: RecordDecoder
) -> BatchColumns:
    import orjson

    size = len(lines)
    out = BatchColumns(
        size=size,
        offsets=[offset for offset, _, _ in lines],
        envelope={name: [None] * size for name, _ in ENVELOPE_FIELDS},
        records=[None] * size,
        versions=[None] * size,
        codes=[None] * size,
        details=[None] * size,
        raw_data=[None] * size,
        raw_bytes=[None] * size,
        texts=[None] * size,
    )
    seqs, keys, arrivals = (out.envelope[name] for name, _ in ENVELOPE_FIELDS)
    records, versions, codes = out.records, out.versions, out.codes
    fast = not decoder.spec.timestamps
    headers = decoder.headers
    loads = orjson.loads
    a2b = binascii.a2b_base64
    import fastavro

    reader = fastavro.schemaless_reader
    max_base64 = decoder.max_base64
    max_line = decoder.limits.max_line_bytes
    max_depth = decoder.limits.max_depth
    bytes_io = io.BytesIO
    texts = out.texts
    for i, (_, line, length) in enumerate(lines):
        if length > max_line:
            codes[i] = LINE_TOO_LONG
            out.details[i] = (
                f"line of {length} bytes is longer than the cap of {max_line} bytes "
                f"(FLOE_DECODE_MAX_LINE_BYTES); raw_data holds its first {RAW_PREFIX} characters"
            )
            out.raw_data[i] = _line_text(line[: RAW_PREFIX * 4])[:RAW_PREFIX]
            _carry_envelope(out, i, scan_envelope_fields(line, max_line))
            continue
        try:
            envelope = loads(line)
        except (orjson.JSONDecodeError, RecursionError, MemoryError) as exc:
            envelope = exc
        data = envelope.get("data") if type(envelope) is dict else None
        if type(data) is not str:
            codes[i] = BAD_ENVELOPE
            why = (
                f"not JSON ({envelope})"
                if isinstance(envelope, BaseException)
                else "not a JSON object with a string 'data' field"
            )
            out.details[i] = _short(f"line is {why}")
            out.raw_data[i] = _line_text(line)
            out.raw_bytes[i] = bytes(line)
            # Whatever envelope fields can be read, so that an operator finds the
            # record by its sequence number (docs/feeds.md, "Hostile input").
            if type(envelope) is dict:
                _carry_envelope(out, i, {n: _text(envelope.get(k)) for n, k in ENVELOPE_FIELDS})
            else:
                _carry_envelope(out, i, scan_envelope_fields(line, max_line))
            continue
        assert isinstance(envelope, dict)
        texts[i] = data
        value = envelope.get("sequenceNumber")
        seqs[i] = value if type(value) is str else _text(value)
        value = envelope.get("partitionKey")
        keys[i] = value if type(value) is str else _text(value)
        value = envelope.get("approximateArrivalTimestamp")
        arrivals[i] = value if type(value) is str else _text(value)
        # The common record, inline: uncompressed Avro with a header already resolved.
        if fast and len(data) <= max_base64:
            try:
                framed = a2b(data, strict_mode=True)
            except (binascii.Error, ValueError):
                framed = b""
            entry = headers.get(framed[:18]) if len(framed) >= 18 else None
            if type(entry) is _Resolved and not entry.compressed and not entry.proto:
                if entry.avro is not None:
                    buffer = bytes_io(framed)
                    buffer.seek(18)
                    try:
                        record = reader(buffer, entry.avro, None)
                    except Exception:  # the general path reports it with its code
                        record = None
                    if record is not None and buffer.tell() == len(framed):
                        records[i] = record
                        versions[i] = entry.number
                        continue
                elif framed.count(b"[") + framed.count(b"{") <= max_depth:
                    # JSON: parse and validate inline; any failure takes the general
                    # path, which names the code (json_parse, schema_violation, ...).
                    try:
                        record = loads(memoryview(framed)[18:])
                        entry.validate(record)
                    except Exception:
                        record = None
                    if record is not None:
                        records[i] = record
                        versions[i] = entry.number
                        continue
        record, version, code, detail, framed_bytes = decoder.decode(data)
        records[i], versions[i] = record, version
        if code is not None:
            codes[i], out.details[i] = code, detail
            out.raw_data[i] = data
            out.raw_bytes[i] = framed_bytes
    return out


# --------------------------------------------------------------------------- Arrow


_EMPTY: dict[str, Any] = {}


def _column(values: list[Any], arrow_type: pa.DataType) -> pa.Array:
    """The struct array of ``values`` (dicts, or None for a row without a record).

    Built column by column (``RecordBatch.from_pylist`` gathers each top-level field in
    C, then converts it with its Arrow type) and assembled with ``StructArray.from_arrays``:
    about four times faster than converting a dict per record into the struct type.
    A value that is not what the type expects raises, and the caller falls back to
    record-by-record conversion.
    """
    import pyarrow as pa

    fields = list(arrow_type)
    missing = [v is None for v in values]
    if not values:
        return pa.array([], type=arrow_type)
    if any(missing):
        rows = [_EMPTY if v is None else v for v in values]
        mask = pa.array(missing, type=pa.bool_())
    else:
        rows, mask = values, None
    if not all(type(r) is dict for r in rows):
        raise TypeError("a record is not an object")
    columns = pa.RecordBatch.from_pylist(rows, schema=pa.schema(fields)).columns
    return pa.StructArray.from_arrays(columns, fields=fields, mask=mask)


_CONVERSION_ERRORS: tuple[type[BaseException], ...] = (
    OverflowError,
    TypeError,
    ValueError,
    AttributeError,
    KeyError,
)


def struct_array(records: list[Any], arrow_type: pa.DataType) -> tuple[pa.Array, dict[int, str]]:
    """One conversion for the batch; record by record only when it fails (rare).

    Returns the array and ``{index: detail}`` of the records the type cannot hold
    (they become NULL here and ``cast_failure`` rows in the caller).
    """
    import pyarrow as pa

    errors = (pa.ArrowException, *_CONVERSION_ERRORS)
    try:
        return _column(records, arrow_type), {}
    except errors:
        pass
    failures: dict[int, str] = {}
    kept = []
    for index, record in enumerate(records):
        if record is not None:
            try:
                pa.array([record], type=arrow_type)
            except (RecursionError, MemoryError, Exception) as exc:
                failures[index] = _short(
                    f"does not fit the table's type: {type(exc).__name__}: {exc}"
                )
                record = None
        kept.append(record)
    return pa.array(kept, type=arrow_type), failures


def to_record_batch(
    cols: BatchColumns,
    schema: pa.Schema,
    fixed: dict[str, Any],
    per_row: dict[str, Iterable[Any]] | None = None,
) -> pa.RecordBatch:
    """The decoded batch as Arrow, in the order of ``schema`` (decode_output_schema).

    ``fixed`` holds columns whose value is the same for the whole batch (the file key and
    its attributes); ``per_row`` columns given row by row (the lines path).
    """
    with gc_paused():
        return _to_record_batch(cols, schema, fixed, per_row)


def _to_record_batch(
    cols: BatchColumns,
    schema: pa.Schema,
    fixed: dict[str, Any],
    per_row: dict[str, Iterable[Any]] | None,
) -> pa.RecordBatch:
    import pyarrow as pa

    struct, failures = struct_array(cols.records, schema.field("record").type)
    for index, detail in failures.items():
        cols.codes[index], cols.details[index] = CAST_FAILURE, detail
        text = cols.texts[index]
        cols.raw_data[index] = text
        if text is not None and cols.raw_bytes[index] is None:
            cols.raw_bytes[index] = binascii.a2b_base64(text)
    arrays = []
    values: dict[str, Any] = {
        "_offset": cols.offsets,
        **cols.envelope,
        "_schema_version": cols.versions,
        "error_code": cols.codes,
        "error_detail": cols.details,
        "raw_data": cols.raw_data,
        "raw_bytes": cols.raw_bytes,
    }
    size = cols.size
    for f in schema:
        if f.name == "record":
            arrays.append(struct)
        elif per_row is not None and f.name in per_row:
            arrays.append(pa.array(list(per_row[f.name]), type=f.type))
        elif f.name in fixed:
            arrays.append(pa.repeat(pa.scalar(fixed[f.name], type=f.type), size))
        elif values[f.name].count(None) == size:  # the error columns of a clean batch
            arrays.append(pa.nulls(size, type=f.type))
        else:
            arrays.append(pa.array(values[f.name], type=f.type))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)
