"""Protobuf compatibility: can a reader compiled from schema R parse bytes written with W?

Protobuf's wire format identifies fields by number, not name, so the rules
(docs/registry.md, "Protobuf") compare the record messages field number by field
number, recursively into message fields:

* ``wire_type_changed`` — a number both use with types that are not wire-compatible:
  the compatible sets are {int32, uint32, int64, uint64, bool, enum} (varint),
  {sint32, sint64} (zigzag), {fixed32, sfixed32}, {fixed64, sfixed64},
  {string, bytes}, and a message with another message (compared recursively);
* ``label_changed`` — a number repeated in one and singular in the other (maps are
  repeated entries);
* ``reserved_reused`` — a new version uses a number or name an earlier version
  reserved (checked along the chain, :func:`reserved_violations`: which side is newer
  decides it, so it is not a reader/writer rule);
* ``name_renumbered`` — a field name bound to another number in the other version
  (a rename-and-renumber silently moves data);
* ``required_added`` — proto2: a ``required`` field the reader has and the writer
  does not (the reader refuses every old record).

Removing a field is compatible (the reader skips unknown numbers); reserving its
number and name keeps the number from being reused, and the rule above enforces
reservations the versions declare.
"""

from __future__ import annotations

from typing import Any

from floe.registry.compat.violations import Violation, join_path

_WIRE_GROUPS: tuple[frozenset[str], ...] = (
    frozenset({"int32", "uint32", "int64", "uint64", "bool", "enum"}),
    frozenset({"sint32", "sint64"}),
    frozenset({"fixed32", "sfixed32"}),
    frozenset({"fixed64", "sfixed64"}),
    frozenset({"string", "bytes"}),
    frozenset({"float"}),
    frozenset({"double"}),
    frozenset({"message"}),
)


def _type_name(field: Any) -> str:
    names = {
        field.TYPE_DOUBLE: "double",
        field.TYPE_FLOAT: "float",
        field.TYPE_INT64: "int64",
        field.TYPE_UINT64: "uint64",
        field.TYPE_INT32: "int32",
        field.TYPE_FIXED64: "fixed64",
        field.TYPE_FIXED32: "fixed32",
        field.TYPE_BOOL: "bool",
        field.TYPE_STRING: "string",
        field.TYPE_GROUP: "group",
        field.TYPE_MESSAGE: "message",
        field.TYPE_BYTES: "bytes",
        field.TYPE_UINT32: "uint32",
        field.TYPE_ENUM: "enum",
        field.TYPE_SFIXED32: "sfixed32",
        field.TYPE_SFIXED64: "sfixed64",
        field.TYPE_SINT32: "sint32",
        field.TYPE_SINT64: "sint64",
    }
    return names[field.type]


def _wire_compatible(a: str, b: str) -> bool:
    return any(a in group and b in group for group in _WIRE_GROUPS)


def _reserved(descriptor: Any) -> tuple[set[int], set[str]]:
    from google.protobuf import descriptor_pb2  # type: ignore[import-untyped]

    proto = descriptor_pb2.DescriptorProto()
    descriptor.CopyToProto(proto)
    numbers = {n for r in proto.reserved_range for n in range(r.start, r.end)}
    return numbers, set(proto.reserved_name)


def _repeated(field: Any) -> bool:
    return bool(getattr(field, "is_repeated", field.label == field.LABEL_REPEATED))


def _required(field: Any) -> bool:
    return bool(getattr(field, "is_required", field.label == field.LABEL_REQUIRED))


def reader_violations(reader: str, writer: str) -> list[Violation]:
    """Why a consumer compiled from ``reader`` cannot read data written with ``writer``."""
    from floe.registry.protobuf import ProtobufSchemaError, message_descriptor

    try:
        r, w = message_descriptor(reader), message_descriptor(writer)
    except ProtobufSchemaError as exc:
        return [Violation("", "invalid_schema", str(exc))]
    return _messages(r, w, "", set())


def _messages(r: Any, w: Any, path: str, seen: set[tuple[str, str]]) -> list[Violation]:
    if (r.full_name, w.full_name) in seen:
        return []
    seen.add((r.full_name, w.full_name))
    found: list[Violation] = []
    for field in r.fields:
        where = join_path(path, field.name)
        other = w.fields_by_number.get(field.number)
        if other is None:
            renamed = w.fields_by_name.get(field.name)
            if renamed is not None:
                found.append(
                    Violation(
                        where,
                        "name_renumbered",
                        f"{field.name} is field {field.number} here, {renamed.number} in the writer",
                    )
                )
            elif _required(field):
                found.append(
                    Violation(
                        where,
                        "required_added",
                        f"required field {field.number} is not in the writer's records",
                    )
                )
            continue
        a, b = _type_name(field), _type_name(other)
        if not _wire_compatible(a, b):
            found.append(Violation(where, "wire_type_changed", f"field {field.number}: {b} -> {a}"))
            continue
        if _repeated(field) != _repeated(other):
            found.append(
                Violation(
                    where,
                    "label_changed",
                    f"field {field.number} is {'repeated' if _repeated(field) else 'singular'} "
                    f"here, {'repeated' if _repeated(other) else 'singular'} in the writer",
                )
            )
            continue
        if a == "message":
            found += _messages(field.message_type, other.message_type, where, seen)
    return found


def reserved_violations(new: str, previous: list[str]) -> list[Violation]:
    """Fields of ``new`` whose number or name an earlier version reserved (any depth,
    messages matched by full name)."""
    from floe.registry.protobuf import ProtobufSchemaError, message_descriptor

    try:
        root = message_descriptor(new)
        olds = [message_descriptor(p) for p in previous]
    except ProtobufSchemaError:
        return []  # reported by validate_definition
    reserved: dict[str, tuple[set[int], set[str]]] = {}
    for old in olds:
        for message in _all_messages(old):
            numbers, names = _reserved(message)
            have = reserved.setdefault(message.full_name, (set(), set()))
            have[0].update(numbers)
            have[1].update(names)
    found = []
    for message in _all_messages(root):
        numbers, names = reserved.get(message.full_name, (set(), set()))
        for field in message.fields:
            if field.number in numbers or field.name in names:
                found.append(
                    Violation(
                        join_path(message.full_name, field.name),
                        "reserved_reused",
                        f"field {field.number} ({field.name}) was reserved by an earlier "
                        "version: use a new number and name",
                    )
                )
    return found


def _all_messages(root: Any) -> list[Any]:
    out, todo, seen = [], [root], set()
    while todo:
        message = todo.pop()
        if message.full_name in seen:
            continue
        seen.add(message.full_name)
        out.append(message)
        todo += [f.message_type for f in message.fields if f.message_type is not None]
    return out
