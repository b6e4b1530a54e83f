"""Compatibility modes: which earlier versions a new version is checked against, and how.

The eight modes of the AWS Glue Schema Registry, mapped to reader/writer pairs exactly
as Glue documents them (``docs/registry.md``, "Compatibility modes"):

* BACKWARD — the new version reads the previous version's data;
* FORWARD — the previous version reads the new version's data;
* FULL — both;
* ``_ALL`` — against every earlier version instead of the latest;
* NONE — no check; DISABLED — no version after the first.

The pair-wise question — *can a reader using schema R read data written with schema
W?* — is answered per data format by :mod:`floe.registry.compat.avro` and
:mod:`floe.registry.compat.json_schema`. ``moto`` stores versions without checking
them, so floe enforces the mode itself, before anything is registered.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from enum import StrEnum
from typing import Any

from floe.registry.compat import avro, json_schema
from floe.registry.compat.violations import Violation
from floe.registry.definitions import parse_data_format as _fmt
from floe.registry.definitions import parse_definition


class Mode(StrEnum):
    NONE = "NONE"
    DISABLED = "DISABLED"
    BACKWARD = "BACKWARD"
    BACKWARD_ALL = "BACKWARD_ALL"
    FORWARD = "FORWARD"
    FORWARD_ALL = "FORWARD_ALL"
    FULL = "FULL"
    FULL_ALL = "FULL_ALL"

    @classmethod
    def parse(cls, value: str | Mode) -> Mode:
        try:
            return cls(str(value.value if isinstance(value, Mode) else value).upper())
        except ValueError:
            names = ", ".join(m.value for m in cls)
            raise ValueError(f"unknown compatibility mode {value!r}; use one of {names}") from None


def compared_versions(mode: str | Mode, previous: int) -> list[int]:
    """Numbers (1-based) of the earlier versions a new version is checked against.

    ``previous`` is how many versions exist already: the latest one for the plain
    modes, every one for the ``_ALL`` modes, none for NONE and DISABLED (DISABLED
    refuses any version after the first outright).
    """
    mode = Mode.parse(mode)
    if previous == 0 or mode in (Mode.NONE, Mode.DISABLED):
        return []
    if mode.value.endswith("_ALL"):
        return list(range(1, previous + 1))
    return [previous]


def directions(mode: str | Mode) -> tuple[str, ...]:
    """Which reads must work: ``backward`` (new reads old), ``forward`` (old reads new)."""
    base = Mode.parse(mode).value.removesuffix("_ALL")
    return _DIRECTIONS.get(base, ())


_DIRECTIONS = {"BACKWARD": ("backward",), "FORWARD": ("forward",), "FULL": ("backward", "forward")}


def check_new_version(
    new: Any, previous: Sequence[Any], mode: str | Mode, data_format: str
) -> list[Violation]:
    """Violations of registering ``new`` after ``previous`` (oldest first) under ``mode``."""
    mode = Mode.parse(mode)
    fmt = _fmt(data_format)
    version = len(previous) + 1
    found = [replace(v, version=version) for v in validate_definition(new, fmt)]
    if found or not previous:
        return found
    if mode is Mode.DISABLED:
        return [
            Violation(
                "",
                "versioning_disabled",
                "compatibility DISABLED allows no version after the first",
                version=version,
            )
        ]
    for number in compared_versions(mode, len(previous)):
        old = previous[number - 1]
        for direction in directions(mode):
            reader, writer = (new, old) if direction == "backward" else (old, new)
            for v in reader_violations(reader, writer, fmt):
                found.append(replace(v, version=version, against=number, direction=direction))
    if fmt == "PROTOBUF" and mode is not Mode.NONE:
        from floe.registry.compat import protobuf

        found += [
            replace(v, version=version)
            for v in protobuf.reserved_violations(str(new), [str(p) for p in previous])
        ]
    return found


def check_chain(definitions: Sequence[Any], mode: str | Mode, data_format: str) -> list[Violation]:
    """Check every version of a chain (oldest first) as if registered in order."""
    found: list[Violation] = []
    if definitions:
        found += [replace(v, version=1) for v in validate_definition(definitions[0], data_format)]
    for i in range(1, len(definitions)):
        found += check_new_version(definitions[i], definitions[:i], mode, data_format)
    return found


def reader_violations(reader: Any, writer: Any, data_format: str) -> list[Violation]:
    """Why a consumer using ``reader`` cannot read data produced with ``writer``."""
    fmt = _fmt(data_format)
    if fmt == "PROTOBUF":
        from floe.registry.compat import protobuf

        return protobuf.reader_violations(str(reader), str(writer))
    r, w = parse_definition(reader), parse_definition(writer)
    if fmt == "AVRO":
        return avro.reader_violations(r, w)
    return json_schema.reader_violations(r, w)


def validate_definition(definition: Any, data_format: str) -> list[Violation]:
    """A definition that is not a valid schema of its format is a violation in itself."""
    fmt = _fmt(data_format)
    if fmt == "PROTOBUF":
        from floe.registry.protobuf import ProtobufSchemaError, validate

        try:
            validate(str(definition))
        except ProtobufSchemaError as exc:
            return [Violation("", "invalid_schema", f"not a valid PROTOBUF schema: {exc}")]
        return []
    try:
        schema = parse_definition(definition)
    except ValueError as exc:
        return [Violation("", "invalid_schema", f"not JSON: {exc}")]
    try:
        if fmt == "AVRO":
            import fastavro

            fastavro.parse_schema(schema, _write_hint=False)
        else:
            import jsonschema

            jsonschema.validators.validator_for(schema).check_schema(schema)
    except Exception as exc:
        return [Violation("", "invalid_schema", f"not a valid {fmt} schema: {exc}")]
    return []
