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
``json_parse``      payload is not UTF-8 JSON
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
    import jsonschema

    schema = json.loads(definition)
    return jsonschema.validators.validator_for(schema)(schema)


def encode_payload(record: Any, version: SchemaVersion) -> bytes:
    """The unframed payload bytes of ``record`` under ``version``."""
    if version.data_format == "AVRO":
        import fastavro

        out = io.BytesIO()
        fastavro.schemaless_writer(out, _avro_schema(version.definition), record)
        return out.getvalue()
    if version.data_format == "JSON":
        return json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode()
    raise ValueError(f"data format {version.data_format!r} is not AVRO or JSON")


def decode_payload(payload: bytes, version: SchemaVersion, validate: bool = True) -> Any:
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
        try:
            record = json.loads(payload.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise JsonParseError(f"payload is not UTF-8 JSON: {exc}") from exc
        if validate:
            error = next(iter(_json_validator(version.definition).iter_errors(record)), None)
            if error is not None:
                where = "/".join(str(p) for p in error.absolute_path) or "<root>"
                raise SchemaViolationError(
                    f"{where}: {error.message} ({version.name} v{version.version_number})"
                )
        return record
    raise ValueError(f"data format {version.data_format!r} is not AVRO or JSON")


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
) -> tuple[SchemaVersion, Any]:
    """Decode one framed record: ``(schema version, record)``.

    Confluent-framed records carry an integer id; ``confluent_ids`` maps it to a
    registered version UUID (floe's registries are keyed by UUID).
    """
    frame_ = wire.decode(data)
    if isinstance(frame_, wire.ConfluentFrame):
        mapped = (confluent_ids or {}).get(frame_.schema_id)
        if mapped is None:
            raise UnknownSchemaError(f"Confluent schema id {frame_.schema_id} has no UUID mapping")
        version = registry.get_by_uuid(mapped)
    else:
        version = registry.get_by_uuid(frame_.schema_version_id)
    return version, decode_payload(frame_.payload, version, validate=validate)
