"""Protobuf schemas in the registry: ``.proto`` text compiled to dynamic descriptors.

A Protobuf version is the text of one ``.proto`` file (proto2 or proto3; no
extensions and no groups, as the Glue Schema Registry accepts), compiled with the
``protoc`` packaged in ``grpcio-tools`` (no system compiler) into a
``FileDescriptorSet``, loaded into a private ``DescriptorPool`` of the ``protobuf``
package. The record type is the file's **first message** (Glue's rule). Everything
here is cached by definition text, so a Python worker compiles a version once.

Decoded records are plain Python values (docs/registry.md, "Protobuf"): nested
messages are dicts (Spark structs), repeated fields lists, maps dicts, enums their
value names, ``google.protobuf.Timestamp`` an aware UTC datetime; a field with
presence (proto2 optional, proto3 ``optional``, message fields, oneof members) that
is unset is None, a proto3 scalar without presence its default.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

TIMESTAMP = "google.protobuf.Timestamp"
FILE_NAME = "schema.proto"


class ProtobufSchemaError(ValueError):
    """A ``.proto`` definition that does not compile, or uses what floe does not support."""


def _include_dir() -> str:
    import grpc_tools

    return str(Path(grpc_tools.__file__).parent / "_proto")


@lru_cache(maxsize=128)
def compile_proto(text: str) -> bytes:
    """The serialized ``FileDescriptorSet`` of ``text`` (with its imports)."""
    with tempfile.TemporaryDirectory(prefix="floe-proto-") as tmp:
        (Path(tmp) / FILE_NAME).write_text(text)
        out = Path(tmp) / "set.pb"
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "grpc_tools.protoc",
                f"-I{tmp}",
                f"-I{_include_dir()}",
                f"--descriptor_set_out={out}",
                "--include_imports",
                FILE_NAME,
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if run.returncode != 0:
            raise ProtobufSchemaError(f"protoc: {run.stderr.strip() or run.stdout.strip()}")
        return out.read_bytes()


@lru_cache(maxsize=128)
def _compiled(text: str) -> tuple[Any, Any]:
    """(pool, FileDescriptorProto of the schema file), checked for unsupported features."""
    from google.protobuf import descriptor_pb2, descriptor_pool  # type: ignore[import-untyped]

    files = descriptor_pb2.FileDescriptorSet.FromString(compile_proto(text))
    pool = descriptor_pool.DescriptorPool()
    main = None
    for proto in files.file:
        pool.Add(proto)
        if proto.name == FILE_NAME:
            main = proto
    if main is None or not main.message_type:
        raise ProtobufSchemaError("the .proto file declares no message")
    problems = []
    if main.extension:
        problems.append("top-level extensions")
    for message in _walk(main.message_type):
        if message.extension or message.extension_range:
            problems.append(f"extensions in {message.name}")
        problems += [
            f"group {message.name}.{f.name}" for f in message.field if f.type == f.TYPE_GROUP
        ]
    if problems:
        raise ProtobufSchemaError(
            f"not supported (as in the Glue Schema Registry): {', '.join(problems)}"
        )
    return pool, main


def _walk(messages: Any) -> list[Any]:
    out = []
    for message in messages:
        out.append(message)
        out += _walk(message.nested_type)
    return out


def message_descriptor(text: str) -> Any:
    """The descriptor of the record type (the file's first message)."""
    pool, main = _compiled(text)
    full = (
        f"{main.package}.{main.message_type[0].name}" if main.package else main.message_type[0].name
    )
    return pool.FindMessageTypeByName(full)


@lru_cache(maxsize=128)
def message_class(text: str) -> Any:
    from google.protobuf import message_factory

    return message_factory.GetMessageClass(message_descriptor(text))


def validate(text: str) -> None:
    """Raise :class:`ProtobufSchemaError` when ``text`` is not a supported schema."""
    message_descriptor(text)


# --------------------------------------------------------------------------- records


def encode(record: Any, text: str) -> bytes:
    """Serialize a JSON-like record (field names as in the .proto; Timestamps as RFC 3339
    text or datetimes) under the schema ``text``."""
    from google.protobuf import json_format

    message = message_class(text)()
    try:
        json_format.ParseDict(_jsonable(record), message)
    except json_format.ParseError as exc:
        raise ValueError(str(exc)) from exc
    return bytes(message.SerializeToString())


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=UTC)
        return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value


def decode(payload: bytes, text: str) -> dict[str, Any]:
    """The record in ``payload`` as Python values (module docstring); raises
    ``google.protobuf.message.DecodeError`` on a malformed payload."""
    message = message_class(text).FromString(payload)
    return _to_python(message)


def _to_python(message: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for field in message.DESCRIPTOR.fields:
        value = getattr(message, field.name)
        if _is_map(field):
            value_field = field.message_type.fields_by_name["value"]
            out[field.name] = {k: _value(value_field, v) for k, v in value.items()}
        elif _repeated(field):
            out[field.name] = [_value(field, v) for v in value]
        elif field.has_presence and not message.HasField(field.name):
            out[field.name] = None
        else:
            out[field.name] = _value(field, value)
    return out


def _repeated(field: Any) -> bool:
    return bool(getattr(field, "is_repeated", field.label == field.LABEL_REPEATED))


def _is_map(field: Any) -> bool:
    return bool(
        _repeated(field)
        and field.message_type is not None
        and field.message_type.GetOptions().map_entry
    )


def _value(field: Any, value: Any) -> Any:
    if field.type in (field.TYPE_UINT64, field.TYPE_FIXED64):
        from decimal import Decimal

        return Decimal(value)  # decimal(20, 0): above a bigint's range
    if field.type == field.TYPE_ENUM:
        found = field.enum_type.values_by_number.get(value)
        return found.name if found is not None else str(value)
    if field.type == field.TYPE_MESSAGE:
        if field.message_type.full_name == TIMESTAMP:
            return value.ToDatetime(tzinfo=UTC)
        return _to_python(value)
    return value


# --------------------------------------------------------------------------- Spark types


def to_spark(text: str) -> Any:
    """The Spark StructType of the record type."""
    return _struct(message_descriptor(text), ())


def _struct(descriptor: Any, stack: tuple[str, ...]) -> Any:
    from pyspark.sql import types as T

    from floe.registry.definitions import UnsupportedSchemaError

    if descriptor.full_name in stack:
        raise UnsupportedSchemaError(
            f"message {descriptor.full_name} is recursive: Spark types cannot express it"
        )
    stack = (*stack, descriptor.full_name)
    fields = []
    for field in descriptor.fields:
        if _is_map(field):
            key = _scalar(field.message_type.fields_by_name["key"], stack)
            value = _scalar(field.message_type.fields_by_name["value"], stack)
            dtype: Any = T.MapType(key, value, True)
        elif _repeated(field):
            dtype = T.ArrayType(_scalar(field, stack), True)
        else:
            dtype = _scalar(field, stack)
        fields.append(T.StructField(field.name, dtype, True))
    return T.StructType(fields)


def _scalar(field: Any, stack: tuple[str, ...]) -> Any:
    from pyspark.sql import types as T

    f = field
    if f.type == f.TYPE_MESSAGE:
        if f.message_type.full_name == TIMESTAMP:
            return T.TimestampType()
        return _struct(f.message_type, stack)
    if f.type == f.TYPE_ENUM:
        return T.StringType()
    return {
        f.TYPE_DOUBLE: T.DoubleType(),
        f.TYPE_FLOAT: T.FloatType(),
        f.TYPE_INT64: T.LongType(),
        f.TYPE_UINT64: T.DecimalType(20, 0),
        f.TYPE_INT32: T.IntegerType(),
        f.TYPE_FIXED64: T.DecimalType(20, 0),
        f.TYPE_FIXED32: T.LongType(),
        f.TYPE_BOOL: T.BooleanType(),
        f.TYPE_STRING: T.StringType(),
        f.TYPE_BYTES: T.BinaryType(),
        f.TYPE_UINT32: T.LongType(),
        f.TYPE_SFIXED32: T.IntegerType(),
        f.TYPE_SFIXED64: T.LongType(),
        f.TYPE_SINT32: T.IntegerType(),
        f.TYPE_SINT64: T.LongType(),
    }[f.type]
