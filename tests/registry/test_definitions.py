"""The one resolver for Avro named types and JSON Schema ``$ref`` (shared by the
compatibility checker and the Spark type mapping)."""

from __future__ import annotations

import pytest
from pyspark.sql import types as T

from floe.registry.compat import reader_violations
from floe.registry.definitions import (
    AvroNames,
    JsonRefs,
    SchemaReferenceError,
    parse_data_format,
    parse_definition,
)
from floe.registry.types import UnsupportedSchemaError, json_schema_to_spark

ADDR = {"type": "record", "name": "Addr", "aliases": ["Place"], "fields": []}
OUTER = {
    "type": "record",
    "name": "Outer",
    "namespace": "a.b",
    "fields": [
        {"name": "home", "type": ADDR},
        {"name": "code", "type": {"type": "fixed", "name": "x.y.Code", "size": 2}},
    ],
}


def test_avro_names_resolve_by_full_name_short_name_and_alias() -> None:
    names = AvroNames(OUTER)
    assert names.lookup("Addr", "a.b") == (ADDR, "a.b")
    assert names.lookup("a.b.Addr", None).schema is ADDR
    assert names.lookup("Place", "a.b").schema is ADDR  # alias, in the record's namespace
    code, namespace = names.lookup("x.y.Code", "a.b")
    assert (code["size"], namespace) == (2, "x.y")  # a dotted name carries its namespace
    with pytest.raises(SchemaReferenceError, match="unknown Avro type name 'Nope'"):
        names.lookup("Nope", "a.b")


def test_avro_resolve_unwraps_primitives_wrappers_and_unions() -> None:
    names = AvroNames(OUTER)
    assert names.resolve("long", "a.b") == ({"type": "long"}, "a.b")
    assert names.resolve({"type": {"type": "Addr"}}, "a.b").schema is ADDR
    assert names.resolve(["null", "Addr"], None).schema == ["null", "Addr"]
    with pytest.raises(SchemaReferenceError, match="not an Avro schema"):
        names.resolve(42, None)


def test_json_refs_follow_pointers_and_chains() -> None:
    root = {
        "definitions": {"A": {"type": "string"}, "B": {"$ref": "#/definitions/A"}},
        "items": [{"type": "integer"}, {"$ref": "#/items/0"}],
        "a~b/c": {"type": "null"},
    }
    refs = JsonRefs(root)
    assert refs.resolve({"type": "boolean"}) == ({"type": "boolean"}, ())
    assert refs.resolve({"$ref": "#/definitions/B"}) == (
        {"type": "string"},
        ("#/definitions/B", "#/definitions/A"),
    )
    assert refs.resolve({"$ref": "#/items/1"})[0] == {"type": "integer"}
    assert refs.resolve({"$ref": "#/a~0b~1c"})[0] == {"type": "null"}  # JSON Pointer escapes
    assert refs.resolve({"$ref": "#"})[0] is root


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("#/definitions/Missing", "does not resolve: nothing at 'Missing'"),
        ("#/items/7", "does not resolve"),
        ("other.json#/A", "is not local"),
        ("#/definitions/Loop", "loop: #/definitions/Loop -> #/definitions/Loop"),
    ],
)
def test_json_refs_that_do_not_resolve_say_why(ref: str, message: str) -> None:
    refs = JsonRefs({"definitions": {"Loop": {"$ref": "#/definitions/Loop"}}, "items": []})
    with pytest.raises(SchemaReferenceError, match=message):
        refs.resolve({"$ref": ref})


def test_checker_and_type_mapping_read_a_ref_chain_alike() -> None:
    root = {
        "type": "object",
        "properties": {"m": {"$ref": "#/definitions/Alias"}},
        "definitions": {
            "Alias": {"$ref": "#/definitions/Money"},
            "Money": {"type": "number"},
        },
    }
    assert json_schema_to_spark(root) == T.StructType([T.StructField("m", T.DoubleType())])
    narrowed = {**root, "definitions": {**root["definitions"], "Money": {"type": "integer"}}}
    assert [(v.path, v.rule) for v in reader_violations(narrowed, root, "JSON")] == [
        ("m", "type_changed")
    ]


def test_unresolvable_ref_is_a_clear_error_for_both() -> None:
    root = {"type": "object", "properties": {"m": {"$ref": "#/definitions/Gone"}}}
    with pytest.raises(UnsupportedSchemaError, match="Gone"):
        json_schema_to_spark(root)
    changed = {"type": "object", "properties": {"m": {"type": "string"}}}
    assert [v.rule for v in reader_violations(changed, root, "JSON")] == ["unresolvable_ref"]
    assert reader_violations(root, root, "JSON") == []  # unchanged: nothing to prove


def test_parse_definition_and_format() -> None:
    assert parse_definition(b' {"type": "int"} ') == {"type": "int"}
    assert parse_definition("string") == "string"
    assert parse_definition('"string"') == "string"
    assert parse_data_format("avro") == "AVRO"
    assert parse_data_format("protobuf") == "PROTOBUF"
    with pytest.raises(ValueError, match="AVRO, JSON or PROTOBUF"):
        parse_data_format("THRIFT")
