"""Schema definitions as every registry module sees them: one parser, one resolver.

A registered definition arrives as text, bytes or already-parsed JSON, in one of two
data formats. Both formats let a schema refer to parts of itself — Avro by *named
types* (a record, enum or fixed declared once and used again by its name), JSON Schema
by local ``$ref`` JSON Pointers into the same document. The compatibility checker
(:mod:`floe.registry.compat`) and the Spark type mapping (:mod:`floe.registry.types`)
both resolve those references here, so the two can never disagree about what a name
means. The rules are written down in ``docs/registry.md`` ("Schema definitions").
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

DATA_FORMATS = ("AVRO", "JSON", "PROTOBUF")  # PROTOBUF: floe.registry.protobuf

AVRO_PRIMITIVES = frozenset(
    {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}
)
AVRO_NAMED = frozenset({"record", "error", "enum", "fixed"})

# Names may point at names; no real schema chains them this deep, so more is a loop.
_MAX_HOPS = 50


class SchemaReferenceError(ValueError):
    """A named type or ``$ref`` that does not resolve, or that resolves in a loop."""


def parse_data_format(value: str) -> str:
    """``value`` as one of :data:`DATA_FORMATS` (case-insensitive), else ``ValueError``."""
    fmt = value.upper()
    if fmt not in DATA_FORMATS:
        raise ValueError(f"data format {value!r} is not AVRO, JSON or PROTOBUF")
    return fmt


def parse_definition(definition: Any) -> Any:
    """The parsed JSON of a definition given as text, bytes or an already-parsed value.

    A bare word that is not JSON (``string``) is an Avro primitive schema and is
    returned as that word.
    """
    if isinstance(definition, bytes | bytearray):
        definition = definition.decode()
    if isinstance(definition, str):
        stripped = definition.strip()
        if stripped[:1] in ("{", "[", '"') or stripped in ("true", "false"):
            return json.loads(stripped)
        return stripped
    return definition


# --------------------------------------------------------------------------- Avro


def avro_fullname(name: str, namespace: str | None) -> str:
    """Avro's full name: a dotted name is already full, else it joins ``namespace``."""
    if "." in name or not namespace:
        return name
    return f"{namespace}.{name}"


def _namespace_of(fullname: str) -> str | None:
    return fullname.rsplit(".", 1)[0] if "." in fullname else None


class AvroType(NamedTuple):
    """A resolved Avro type: ``schema`` is a dict (a list for a union); ``namespace`` is
    the one relative names inside it resolve in — for a named type, its own namespace,
    so its full name is ``avro_fullname(schema["name"], namespace)``."""

    schema: Any
    namespace: str | None


class AvroNames:
    """Every named type of one Avro schema, by full name and by alias.

    The index is built up front from the whole document, so a name resolves wherever
    it is used (a recursive record refers to itself inside its own fields).
    """

    def __init__(self, root: Any) -> None:
        self.root = root
        self._named: dict[str, AvroType] = {}
        self._collect(root, None)

    def _collect(self, schema: Any, namespace: str | None) -> None:
        if isinstance(schema, list):
            for branch in schema:
                self._collect(branch, namespace)
            return
        if not isinstance(schema, dict):
            return
        kind = schema.get("type")
        if isinstance(kind, dict | list):
            self._collect(kind, namespace)
            return
        if kind in AVRO_NAMED and "name" in schema:
            full = avro_fullname(schema["name"], schema.get("namespace", namespace))
            inner = _namespace_of(full)
            self._named[full] = AvroType(schema, inner)
            for alias in schema.get("aliases", []):
                self._named.setdefault(avro_fullname(alias, inner), AvroType(schema, inner))
            if kind in ("record", "error"):
                for field in schema.get("fields", []):
                    self._collect(field.get("type"), inner)
        elif kind == "array":
            self._collect(schema.get("items"), namespace)
        elif kind == "map":
            self._collect(schema.get("values"), namespace)

    def lookup(self, name: str, namespace: str | None) -> AvroType:
        """The named type ``name`` means when written inside ``namespace``."""
        hit = self._named.get(avro_fullname(name, namespace)) or self._named.get(name)
        if hit is None:
            raise SchemaReferenceError(f"unknown Avro type name {name!r}")
        return hit

    def resolve(self, schema: Any, namespace: str | None) -> AvroType:
        """Follow names and ``{"type": ...}`` wrappers down to a type definition.

        A primitive name becomes ``{"type": name}``; a union stays a list.
        """
        for _ in range(_MAX_HOPS):
            if isinstance(schema, list):
                return AvroType(schema, namespace)
            if isinstance(schema, str):
                if schema in AVRO_PRIMITIVES:
                    return AvroType({"type": schema}, namespace)
                return self.lookup(schema, namespace)
            if isinstance(schema, dict):
                kind = schema.get("type")
                if isinstance(kind, dict | list):
                    schema = kind
                    continue
                if kind in AVRO_NAMED and "name" in schema:
                    full = avro_fullname(schema["name"], schema.get("namespace", namespace))
                    return AvroType(schema, _namespace_of(full))
                if kind in AVRO_PRIMITIVES or kind in ("array", "map"):
                    return AvroType(schema, namespace)
                if isinstance(kind, str):
                    schema = kind  # {"type": "SomeNamedType"}
                    continue
            raise SchemaReferenceError(f"not an Avro schema: {schema!r}")
        raise SchemaReferenceError("Avro type names refer to each other in a loop")


# --------------------------------------------------------------------------- JSON Schema


class JsonRefs:
    """Local ``$ref`` resolution inside one JSON Schema document.

    Only fragment references (``#``, ``#/definitions/Money``, ``#/$defs/x/items/0``)
    are supported: a registered version must be self-contained.
    """

    def __init__(self, root: Any) -> None:
        self.root = root

    def resolve(self, schema: Any) -> tuple[Any, tuple[str, ...]]:
        """The schema a (chain of) ``$ref`` points at, and the refs followed to get there.

        A schema without ``$ref`` is returned as is, with no refs. Keywords beside a
        ``$ref`` are ignored, as in draft-07.
        """
        followed: list[str] = []
        for _ in range(_MAX_HOPS):
            if not (isinstance(schema, dict) and isinstance(schema.get("$ref"), str)):
                return schema, tuple(followed)
            ref = schema["$ref"]
            if ref in followed:
                chain = " -> ".join([*followed, ref])
                raise SchemaReferenceError(f"$ref loop: {chain}")
            followed.append(ref)
            schema = self.pointer(ref)
        raise SchemaReferenceError(f"$ref chain longer than {_MAX_HOPS}: {followed[0]!r}")

    def pointer(self, ref: str) -> Any:
        """The node a local ``$ref`` (a JSON Pointer fragment) names."""
        if not ref.startswith("#"):
            raise SchemaReferenceError(
                f"$ref {ref!r} is not local: only '#/...' references inside the schema "
                "are supported (inline the referenced schema)"
            )
        node = self.root
        for raw in ref[1:].split("/"):
            if not raw:
                continue
            part = raw.replace("~1", "/").replace("~0", "~")
            try:
                node = node[int(part)] if isinstance(node, list) else node[part]
            except (KeyError, IndexError, ValueError, TypeError):
                raise SchemaReferenceError(
                    f"$ref {ref!r} does not resolve: nothing at {part!r}"
                ) from None
        return node


class UnsupportedSchemaError(ValueError):
    """A schema with no Spark type (e.g. a recursive record)."""
