"""Avro and JSON Schema → Spark SQL types, as pure functions (``docs/registry.md``).

Avro follows the Glue streaming conversions of the seed (enum→string, fixed→binary,
union→struct) and spark-avro's conventions where the seed is silent: ``[null, X]`` is a
nullable ``X``; ``[int, long]`` is long and ``[float, double]`` double; any other union
is a struct ``member0 .. memberN`` of the non-null branches (all nullable, at most one
set). Logical types: date→date, timestamp-millis/micros→timestamp,
local-timestamp-*→timestamp_ntz, decimal→decimal(p, s).

JSON Schema: integer→bigint (the seed's ApplyMapping turns every int into long),
number→double, ``format: date``/``date-time`` strings→date/timestamp, objects with
properties→struct (nullable unless required), objects with only an
``additionalProperties`` schema→map<string, X>, free-form values→string holding the
JSON text, ``anyOf``/``oneOf``/multi-type unions→struct ``member0 .. memberN``.

Avro named types and JSON Schema ``$ref`` are resolved by
:mod:`floe.registry.definitions`, the same resolver the compatibility checker uses.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import types as T

from floe.registry.definitions import (
    AVRO_NAMED,
    AvroNames,
    JsonRefs,
    SchemaReferenceError,
    UnsupportedSchemaError,
    avro_fullname,
    parse_data_format,
    parse_definition,
)

_AVRO_PRIMITIVES: dict[str, T.DataType] = {
    "null": T.NullType(),
    "boolean": T.BooleanType(),
    "int": T.IntegerType(),
    "long": T.LongType(),
    "float": T.FloatType(),
    "double": T.DoubleType(),
    "bytes": T.BinaryType(),
    "string": T.StringType(),
}


def to_spark_type(definition: Any, data_format: str) -> T.DataType:
    """Spark type of a registered schema definition (text or parsed)."""
    if parse_data_format(data_format) == "PROTOBUF":
        from floe.registry.protobuf import to_spark

        return to_spark(str(parse_definition(definition)))
    schema = parse_definition(definition)
    if parse_data_format(data_format) == "AVRO":
        return avro_to_spark(schema)
    return json_schema_to_spark(schema)


# --------------------------------------------------------------------------- Avro


def avro_to_spark(schema: Any) -> T.DataType:
    """Spark type of an Avro schema (a record gives a StructType)."""
    return _Avro(schema).convert(schema, None, ())[0]


class _Avro:
    def __init__(self, root: Any) -> None:
        self.names = AvroNames(root)

    def convert(
        self, schema: Any, ns: str | None, stack: tuple[str, ...]
    ) -> tuple[T.DataType, bool]:
        """(type, nullable); ``stack`` holds the records being converted (recursion)."""
        try:
            schema, ns = self.names.resolve(schema, ns)
        except SchemaReferenceError as exc:
            raise UnsupportedSchemaError(str(exc)) from exc
        if isinstance(schema, list):
            return self._union(schema, ns, stack)
        kind = schema["type"]
        logical = self._logical(schema)
        if logical is not None:
            return logical, False
        if kind in _AVRO_PRIMITIVES:
            return _AVRO_PRIMITIVES[kind], kind == "null"
        if kind == "enum":
            return T.StringType(), False
        if kind == "fixed":
            return T.BinaryType(), False
        if kind in AVRO_NAMED:  # record / error; ns is the record's own namespace
            full = avro_fullname(schema["name"], ns)
            if full in stack:
                raise UnsupportedSchemaError(
                    f"record {full} is recursive: Spark types cannot express it"
                )
            fields = []
            for field in schema.get("fields", []):
                dtype, nullable = self.convert(field["type"], ns, (*stack, full))
                fields.append(T.StructField(field["name"], dtype, nullable))
            return T.StructType(fields), False
        if kind == "array":
            element, nullable = self.convert(schema["items"], ns, stack)
            return T.ArrayType(element, nullable), False
        # map (resolve() returns nothing else)
        value, nullable = self.convert(schema["values"], ns, stack)
        return T.MapType(T.StringType(), value, nullable), False

    @staticmethod
    def _logical(schema: dict[str, Any]) -> T.DataType | None:
        logical, kind = schema.get("logicalType"), schema.get("type")
        if logical == "date" and kind == "int":
            return T.DateType()
        if logical in ("timestamp-millis", "timestamp-micros") and kind == "long":
            return T.TimestampType()
        if logical in ("local-timestamp-millis", "local-timestamp-micros") and kind == "long":
            return T.TimestampNTZType()
        if logical == "decimal" and kind in ("bytes", "fixed"):
            precision = int(schema.get("precision", 38))
            scale = int(schema.get("scale", 0))
            if not 0 < precision <= 38 or not 0 <= scale <= precision:
                raise UnsupportedSchemaError(
                    f"decimal({precision}, {scale}) does not fit Spark's decimal (max 38)"
                )
            return T.DecimalType(precision, scale)
        return None  # unknown logical types fall back to the underlying type (Avro spec)

    def _union(
        self, branches: list[Any], ns: str | None, stack: tuple[str, ...]
    ) -> tuple[T.DataType, bool]:
        converted = [self.convert(b, ns, stack)[0] for b in branches]
        nullable = any(isinstance(t, T.NullType) for t in converted)
        members = [t for t in converted if not isinstance(t, T.NullType)]
        if not members:
            return T.NullType(), True
        if len(members) == 1:
            return members[0], nullable
        kinds = {type(t) for t in members}
        if kinds == {T.IntegerType, T.LongType}:
            return T.LongType(), nullable
        if kinds == {T.FloatType, T.DoubleType}:
            return T.DoubleType(), nullable
        struct = T.StructType([T.StructField(f"member{i}", t, True) for i, t in enumerate(members)])
        return struct, nullable


# --------------------------------------------------------------------------- JSON Schema


def json_schema_to_spark(schema: Any) -> T.DataType:
    """Spark type of a JSON Schema (an object with properties gives a StructType)."""
    return _Json(schema).convert(schema, ())[0]


class _Json:
    def __init__(self, root: Any) -> None:
        self.refs = JsonRefs(root)

    def _deref(self, schema: Any) -> tuple[Any, tuple[str, ...]]:
        try:
            return self.refs.resolve(schema)
        except SchemaReferenceError as exc:
            raise UnsupportedSchemaError(str(exc)) from exc

    def convert(self, schema: Any, stack: tuple[str, ...]) -> tuple[T.DataType, bool]:
        """(type, nullable); ``stack`` holds the ``$ref`` s being expanded (recursion)."""
        schema, refs = self._deref(schema)
        for ref in refs:
            if ref in stack:
                raise UnsupportedSchemaError(f"{ref} is recursive: Spark types cannot express it")
        stack = (*stack, *refs)
        if schema is True or schema == {} or not isinstance(schema, dict):
            return T.StringType(), True  # anything: kept as JSON text
        for keyword in ("anyOf", "oneOf"):
            if keyword in schema:
                base = {k: v for k, v in schema.items() if k != keyword}
                branches = [{**base, **b} if isinstance(b, dict) else b for b in schema[keyword]]
                return self._union([self.convert(b, stack) for b in branches])
        if "allOf" in schema:
            merged = {k: v for k, v in schema.items() if k != "allOf"}
            for member in schema["allOf"]:
                member, _ = self._deref(member)
                if isinstance(member, dict):
                    props = {**merged.get("properties", {}), **member.get("properties", {})}
                    required = set(merged.get("required", [])) | set(member.get("required", []))
                    merged = {**merged, **member, "properties": props, "required": sorted(required)}
            return self.convert(merged, stack)
        kinds = schema.get("type")
        if kinds is None:
            values = schema.get("enum", [schema["const"]] if "const" in schema else None)
            if values is None:
                if "properties" in schema:
                    kinds = "object"
                else:
                    return T.StringType(), True
            else:
                kinds = sorted({_json_kind(v) for v in values})
        if isinstance(kinds, list):
            non_null = [k for k in kinds if k != "null"]
            nullable = "null" in kinds
            if not non_null:
                return T.NullType(), True
            if set(non_null) == {"integer", "number"}:
                return T.DoubleType(), nullable
            if len(non_null) > 1:
                dtype, _ = self._union(
                    [self.convert({**schema, "type": k}, stack) for k in non_null]
                )
                return dtype, True
            dtype, _ = self.convert({**schema, "type": non_null[0]}, stack)
            return dtype, nullable
        return self._single(schema, kinds, stack), False

    def _single(self, schema: dict[str, Any], kind: str, stack: tuple[str, ...]) -> T.DataType:
        if kind == "string":
            fmt = schema.get("format")
            if fmt == "date":
                return T.DateType()
            if fmt == "date-time":
                return T.TimestampType()
            return T.StringType()
        if kind == "integer":
            return T.LongType()
        if kind == "number":
            return T.DoubleType()
        if kind == "boolean":
            return T.BooleanType()
        if kind == "null":
            return T.NullType()
        if kind == "array":
            items = schema.get("items", True)
            if isinstance(items, list):  # tuple form: no common element type
                return T.ArrayType(T.StringType(), True)
            element, _ = self.convert(items, stack)
            return T.ArrayType(element, True)
        if kind == "object":
            props = schema.get("properties")
            extra = schema.get("additionalProperties", True)
            if not props:
                if isinstance(extra, dict) and extra:
                    value, _ = self.convert(extra, stack)
                    return T.MapType(T.StringType(), value, True)
                return T.StringType()  # free-form object: JSON text
            required = set(schema.get("required", []))
            fields = []
            for name, sub in props.items():
                dtype, nullable = self.convert(sub, stack)
                fields.append(T.StructField(name, dtype, nullable or name not in required))
            return T.StructType(fields)
        raise UnsupportedSchemaError(f"unknown JSON Schema type {kind!r}")

    @staticmethod
    def _union(converted: list[tuple[T.DataType, bool]]) -> tuple[T.DataType, bool]:
        nullable = any(n or isinstance(t, T.NullType) for t, n in converted)
        members: list[T.DataType] = []
        for dtype, _ in converted:
            if not isinstance(dtype, T.NullType) and dtype not in members:
                members.append(dtype)
        if not members:
            return T.NullType(), True
        if len(members) == 1:
            return members[0], nullable
        if set(map(type, members)) == {T.LongType, T.DoubleType}:
            return T.DoubleType(), nullable
        fields = [T.StructField(f"member{i}", t, True) for i, t in enumerate(members)]
        return T.StructType(fields), nullable


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"
