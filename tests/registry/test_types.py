"""Avro / JSON Schema → Spark types (pure; no SparkSession)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pyspark.sql import types as T

from floe.registry.types import (
    UnsupportedSchemaError,
    avro_to_spark,
    json_schema_to_spark,
    to_spark_type,
)

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas" / "floe"
S, I, L = T.StringType(), T.IntegerType(), T.LongType()  # noqa: E741


def field(name: str, dtype: T.DataType, nullable: bool = False) -> T.StructField:
    return T.StructField(name, dtype, nullable)


def rec(*fields: dict) -> dict:
    return {"type": "record", "name": "R", "fields": list(fields)}


def test_unicorn_ride_request_maps_like_glue_streaming() -> None:
    text = (SCHEMAS / "unicorn_ride_request" / "v1.avsc").read_text()
    assert to_spark_type(text, "AVRO") == T.StructType(
        [
            field("request_id", I),
            field("pickup_address", S),
            field("destination_address", S),
            field("ride_fare", T.FloatType()),
            field("ride_duration", I),
            field("preferred_unicorn_color", S),  # enum -> string
            field(
                "recommended_unicorn",
                T.StructType(
                    [field("unicorn_id", I), field("color", S), field("stars_rating", I, True)]
                ),
            ),
            field(
                "customer",
                T.StructType(
                    [
                        field("customer_account_no", I),
                        field("first_name", S),
                        field("middle_name", S, True),
                        field("last_name", S),
                        field("email_addresses", T.ArrayType(S, False), True),
                        field("customer_address", S),
                        field("mode_of_payment", S),
                        field("customer_rating", I, True),
                    ]
                ),
            ),
        ]
    )


@pytest.mark.parametrize(
    ("avro", "expected", "nullable"),
    [
        ({"type": "fixed", "name": "H", "size": 16}, T.BinaryType(), False),
        ({"type": "enum", "name": "E", "symbols": ["A"]}, S, False),
        (["null", "long"], L, True),
        (["long", "null"], L, True),
        (["int", "long"], L, False),
        (["null", "float", "double"], T.DoubleType(), True),
        (
            ["null", "string", "int"],
            T.StructType([field("member0", S, True), field("member1", I, True)]),
            True,
        ),
        ({"type": "array", "items": ["null", "string"]}, T.ArrayType(S, True), False),
        ({"type": "map", "values": "long"}, T.MapType(S, L, False), False),
        ({"type": "int", "logicalType": "date"}, T.DateType(), False),
        ({"type": "long", "logicalType": "timestamp-millis"}, T.TimestampType(), False),
        ({"type": "long", "logicalType": "timestamp-micros"}, T.TimestampType(), False),
        ({"type": "long", "logicalType": "local-timestamp-millis"}, T.TimestampNTZType(), False),
        (
            {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2},
            T.DecimalType(10, 2),
            False,
        ),
        (
            {
                "type": "fixed",
                "name": "D",
                "size": 8,
                "logicalType": "decimal",
                "precision": 18,
                "scale": 4,
            },
            T.DecimalType(18, 4),
            False,
        ),
        ({"type": "string", "logicalType": "uuid"}, S, False),
        ({"type": "int", "logicalType": "no-such-thing"}, I, False),
    ],
)
def test_avro_field_types(avro: object, expected: T.DataType, nullable: bool) -> None:
    assert avro_to_spark(rec({"name": "x", "type": avro})) == T.StructType(
        [field("x", expected, nullable)]
    )


def test_avro_named_type_reused_by_reference_and_namespace() -> None:
    schema = {
        "type": "record",
        "name": "Outer",
        "namespace": "a.b",
        "fields": [
            {
                "name": "home",
                "type": {
                    "type": "record",
                    "name": "Addr",
                    "fields": [{"name": "z", "type": "string"}],
                },
            },
            {"name": "work", "type": "Addr"},
            {"name": "alt", "type": ["null", "a.b.Addr"]},
        ],
    }
    addr = T.StructType([field("z", S)])
    assert avro_to_spark(schema) == T.StructType(
        [field("home", addr), field("work", addr), field("alt", addr, True)]
    )


def test_recursive_avro_is_a_clear_error() -> None:
    node = {
        "type": "record",
        "name": "Node",
        "fields": [{"name": "next", "type": ["null", "Node"]}],
    }
    with pytest.raises(UnsupportedSchemaError, match="recursive"):
        avro_to_spark(node)


def test_movies_v2_nullable_country() -> None:
    dtype = to_spark_type(json.loads((SCHEMAS / "movies" / "v2.avsc").read_text()), "AVRO")
    assert dtype["COUNTRY"] == field("COUNTRY", S, True)
    assert dtype["__source_ts_ms"] == field("__source_ts_ms", L, True)
    assert dtype["movie_id"] == field("movie_id", I)


def test_weather_report_v2() -> None:
    dtype = to_spark_type((SCHEMAS / "weather_report" / "v2.json").read_text(), "JSON")
    assert dtype == T.StructType(
        [
            field("temperature", L),
            field(
                "location",
                T.StructType([field("city", S), field("state", S), field("country", S, True)]),
            ),
            field("timestamp", L),
        ]
    )


def test_ventilator_ints_are_bigint_like_the_seed_mapping() -> None:
    dtype = to_spark_type((SCHEMAS / "ventilator" / "v1.json").read_text(), "JSON")
    assert [(f.name, f.dataType, f.nullable) for f in dtype.fields] == [
        ("ventilatorid", L, True),
        ("eventtime", S, True),
        ("serialnumber", S, True),
        ("pressurecontrol", L, True),
        ("o2stats", L, True),
        ("minutevolume", L, True),
        ("manufacturer", S, True),
    ]


@pytest.mark.parametrize(
    ("schema", "expected", "nullable"),
    [
        ({"type": "number"}, T.DoubleType(), True),
        ({"type": "boolean"}, T.BooleanType(), True),
        ({"type": ["string", "null"]}, S, True),
        ({"type": ["integer", "number"]}, T.DoubleType(), True),
        ({"type": "string", "format": "date-time"}, T.TimestampType(), True),
        ({"type": "string", "format": "date"}, T.DateType(), True),
        ({"enum": ["a", "b"]}, S, True),
        ({"enum": [1, 2]}, L, True),
        ({"type": "array", "items": {"type": "integer"}}, T.ArrayType(L, True), True),
        (
            {"type": "object", "additionalProperties": {"type": "integer"}},
            T.MapType(S, L, True),
            True,
        ),
        ({"type": "object"}, S, True),
        ({}, S, True),
        (
            {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            T.StructType([field("member0", S, True), field("member1", L, True)]),
            True,
        ),
        ({"oneOf": [{"type": "integer"}, {"type": "null"}]}, L, True),
        ({"$ref": "#/definitions/Money"}, T.DoubleType(), True),
    ],
)
def test_json_property_types(schema: dict, expected: T.DataType, nullable: bool) -> None:
    root = {
        "type": "object",
        "properties": {"x": schema},
        "definitions": {"Money": {"type": "number"}},
    }
    assert json_schema_to_spark(root) == T.StructType([field("x", expected, nullable)])


def test_json_required_is_not_nullable_unless_null_allowed() -> None:
    root = {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": ["string", "null"]}},
        "required": ["a", "b"],
    }
    assert json_schema_to_spark(root) == T.StructType([field("a", S), field("b", S, True)])


def test_unknown_format_is_an_error() -> None:
    with pytest.raises(ValueError, match="AVRO, JSON or PROTOBUF"):
        to_spark_type({}, "THRIFT")
