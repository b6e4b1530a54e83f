"""Records ⇄ framed bytes: what producers write and what ingestion decodes.

``frame`` serializes a record with a registered schema version (Avro binary without a
container via fastavro, or compact UTF-8 JSON) and wraps it in Glue framing.
``unframe`` reverses it: wire header, schema lookup by UUID, payload decode, and — for
JSON — validation against the JSON Schema. Every failure is an exception with a stable
``code`` (see :data:`DECODE_ERRORS`, and ``docs/registry.md``) so ingestion can quarantine
by cause:

==================  =============================================================
``bad_base64``      (wire) landing text is not base64
``bad_header``      (wire) first byte is not a known framing
``unknown_compression`` / ``truncated`` / ``bad_zlib``  (wire)
``unknown_schema``  UUID not in the registry
``avro_decode``     Avro payload does not decode (truncated, trailing bytes, bad data)
``json_parse``      payload is not UTF-8 JSON as RFC 8259 defines it (no NaN/Infinity)
``too_deep``        JSON payload nests deeper than the cap
``schema_violation``  JSON payload breaks its JSON Schema
==================  =============================================================

Parsed schemas and validators are cached by canonical definition text, so decoding a
partition resolves each schema once.
"""

from __future__ import annotations

import io
import json
import uuid
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from floe.registry import wire
from floe.registry.backends import Registry, SchemaVersion, UnknownSchemaError


class PayloadError(ValueError):
    """The framing is fine but the payload does not decode under its schema."""

    code = "payload"

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class AvroDecodeError(PayloadError):
    code = "avro_decode"


class JsonParseError(PayloadError):
    code = "json_parse"


class SchemaViolationError(PayloadError):
    code = "schema_violation"


class ProtobufDecodeError(PayloadError):
    code = "protobuf_decode"


class TooDeepError(PayloadError):
    """A JSON payload nested deeper than the cap (a parser/validator stack bomb)."""

    code = "too_deep"


# JSON nesting allowed when the caller gives no cap (orjson's own limit is 1024).
DEFAULT_MAX_DEPTH = 128


# Catch these (all carry ``.code``) to quarantine instead of failing a batch.
DECODE_ERRORS: tuple[type[Exception], ...] = (
    wire.WireFormatError,
    UnknownSchemaError,
    PayloadError,
)


@lru_cache(maxsize=256)
def _avro_schema(definition: str) -> Any:
    import fastavro

    return fastavro.parse_schema(json.loads(definition))


@lru_cache(maxsize=256)
def _json_validator(definition: str) -> Any:
    """The definition compiled to a Python function (fastjsonschema) that raises on the
    first violation. Formats are not asserted (as jsonschema's default validator)."""
    import fastjsonschema

    return fastjsonschema.compile(json.loads(definition), use_formats=False)


def json_depth(value: Any, limit: int) -> int:
    """Nesting depth of a parsed JSON value, counted without recursion; stops past ``limit``."""
    depth = 0
    level = [value]
    while level:
        children: list[Any] = []
        for item in level:
            if isinstance(item, dict):
                children.extend(item.values())
            elif isinstance(item, list):
                children.extend(item)
        if not children and not any(isinstance(i, dict | list) for i in level):
            break
        depth += 1
        if depth > limit:
            break
        level = children
    return depth


def parse_json(payload: bytes, max_depth: int = DEFAULT_MAX_DEPTH) -> Any:
    """Strict JSON (RFC 8259): UTF-8 only, no NaN/Infinity, nesting at most ``max_depth``.

    orjson parses without recursion on the Python stack and refuses what the standard
    does not define; the depth is walked only when the bracket count could exceed it.
    """
    import orjson

    try:
        value = orjson.loads(payload)
    except orjson.JSONDecodeError as exc:
        if "depth limit" in str(exc):
            raise TooDeepError(f"JSON payload nests deeper than {max_depth} levels") from exc
        raise JsonParseError(f"payload is not UTF-8 JSON: {exc}") from exc
    if (
        payload.count(b"[") + payload.count(b"{") > max_depth
        and json_depth(value, max_depth) > max_depth
    ):
        raise TooDeepError(
            f"JSON payload nests deeper than {max_depth} levels (FLOE_DECODE_MAX_DEPTH)"
        )
    return value


def validate_json(record: Any, version: SchemaVersion) -> None:
    """Raise :class:`SchemaViolationError` naming the path and rule the record breaks."""
    import fastjsonschema

    try:
        _json_validator(version.definition)(record)
    except fastjsonschema.JsonSchemaValueException as exc:
        path = exc.path if isinstance(exc.path, list) else []
        where = "/".join(str(p) for p in path[1:]) or "<root>"
        raise SchemaViolationError(
            f"{where}: {exc.message} ({version.name} v{version.version_number})"
        ) from exc


def encode_payload(record: Any, version: SchemaVersion) -> bytes:
    """The unframed payload bytes of ``record`` under ``version``."""
    if version.data_format == "AVRO":
        import fastavro

        out = io.BytesIO()
        fastavro.schemaless_writer(out, _avro_schema(version.definition), record)
        return out.getvalue()
    if version.data_format == "JSON":
        return json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode()
    if version.data_format == "PROTOBUF":
        from floe.registry import protobuf

        return protobuf.encode(record, version.definition)
    raise ValueError(f"data format {version.data_format!r} is not AVRO, JSON or PROTOBUF")


def decode_payload(
    payload: bytes,
    version: SchemaVersion,
    validate: bool = True,
    max_depth: int = DEFAULT_MAX_DEPTH,
) -> Any:
    """Decode payload bytes under ``version``; raises a :class:`PayloadError`."""
    if version.data_format == "AVRO":
        import fastavro

        buffer = io.BytesIO(payload)
        try:
            record = fastavro.schemaless_reader(buffer, _avro_schema(version.definition), None)
        except Exception as exc:  # fastavro raises EOFError, ValueError, IndexError...
            raise AvroDecodeError(
                f"Avro payload ({len(payload)} bytes) does not decode with "
                f"{version.name} v{version.version_number}: {type(exc).__name__}: {exc}"
            ) from exc
        if buffer.tell() != len(payload):
            raise AvroDecodeError(
                f"{len(payload) - buffer.tell()} bytes left after the Avro record "
                f"({version.name} v{version.version_number}): wrong schema or corrupt payload"
            )
        return record
    if version.data_format == "JSON":
        record = parse_json(payload, max_depth)
        if validate:
            validate_json(record, version)
        return record
    if version.data_format == "PROTOBUF":
        from floe.registry import protobuf

        try:
            return protobuf.decode(payload, version.definition)
        except Exception as exc:  # DecodeError, and RuntimeWarning-free bad varints
            raise ProtobufDecodeError(
                f"Protobuf payload ({len(payload)} bytes) does not decode with "
                f"{version.name} v{version.version_number}: {type(exc).__name__}: {exc}"
            ) from exc
    raise ValueError(f"data format {version.data_format!r} is not AVRO, JSON or PROTOBUF")


def frame(record: Any, schema_version: SchemaVersion, compress: bool = False) -> bytes:
    """Serialize ``record`` and wrap it in Glue framing (zlib when ``compress``)."""
    payload = encode_payload(record, schema_version)
    return wire.encode_glue(payload, schema_version.uuid, compress=compress)


def unframe(
    data: bytes,
    registry: Registry,
    *,
    validate: bool = True,
    confluent_ids: Mapping[int, uuid.UUID | str] | None = None,
    max_inflated: int | None = None,
    max_depth: int = DEFAULT_MAX_DEPTH,
) -> tuple[SchemaVersion, Any]:
    """Decode one framed record: ``(schema version, record)``.

    Confluent-framed records carry an integer id; ``confluent_ids`` maps it to a
    registered version UUID (floe's registries are keyed by UUID).
    """
    frame_ = wire.decode(data, max_inflated)
    if isinstance(frame_, wire.ConfluentFrame):
        mapped = (confluent_ids or {}).get(frame_.schema_id)
        if mapped is None:
            raise UnknownSchemaError(f"Confluent schema id {frame_.schema_id} has no UUID mapping")
        version = registry.get_by_uuid(mapped)
    else:
        version = registry.get_by_uuid(frame_.schema_version_id)
    return version, decode_payload(frame_.payload, version, validate=validate, max_depth=max_depth)
