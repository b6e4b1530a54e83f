"""Protobuf in the registry: compile, encode/decode, Spark types, compatibility rules."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest

from floe.registry import protobuf
from floe.registry.compat import Mode, check_chain, reader_violations
from tests.streams.conftest import FIXTURE_PROJECT

TRIPS = FIXTURE_PROJECT / "schemas" / "floe" / "trips"
V1 = (TRIPS / "v1.proto").read_text()
V2 = (TRIPS / "v2.proto").read_text()


def _proto(body: str, syntax: str = "proto3") -> str:
    return f'syntax = "{syntax}";\npackage t;\n{body}\n'


def test_a_record_round_trips_to_typed_python_values():
    record = {
        "trip_id": 7,
        "city": "Oslo",
        "kind": "SHARED",
        "start": {"lat": 59.9, "lon": 10.7},
        "tags": ["a", "b"],
        "started_at": "2026-01-02T03:04:05.250Z",
        "cash": 12.5,
        "counters": {"stops": 3},
        "distance_m": 18446744073709551615,
    }
    decoded = protobuf.decode(protobuf.encode(record, V1), V1)
    assert decoded == {
        "trip_id": 7,
        "city": "Oslo",
        "kind": "SHARED",
        "start": {"lat": 59.9, "lon": 10.7},
        "tags": ["a", "b"],
        "started_at": datetime(2026, 1, 2, 3, 4, 5, 250000, tzinfo=UTC),
        "card": None,  # the other oneof member
        "cash": 12.5,
        "counters": {"stops": 3},
        "distance_m": Decimal(18446744073709551615),
    }
    sparse = protobuf.decode(protobuf.encode({"trip_id": 1}, V1), V1)
    assert sparse["start"] is None and sparse["distance_m"] is None and sparse["city"] == ""


def test_spark_types_follow_the_message():
    from pyspark.sql import types as T

    struct = protobuf.to_spark(V1)
    types = {f.name: f.dataType for f in struct.fields}
    assert types["trip_id"] == T.LongType()
    assert types["kind"] == T.StringType()
    assert types["start"] == T.StructType(
        [T.StructField("lat", T.DoubleType()), T.StructField("lon", T.DoubleType())]
    )
    assert types["tags"] == T.ArrayType(T.StringType())
    assert types["started_at"] == T.TimestampType()
    assert types["counters"] == T.MapType(T.StringType(), T.IntegerType())
    assert types["distance_m"] == T.DecimalType(20, 0)


def test_extensions_groups_and_bad_syntax_are_refused():
    with pytest.raises(protobuf.ProtobufSchemaError, match="extensions"):
        protobuf.validate(_proto("message A { extensions 100 to 200; }", "proto2"))
    with pytest.raises(protobuf.ProtobufSchemaError, match="group"):
        protobuf.validate(
            _proto("message A { optional group G = 1 { optional int32 x = 2; } }", "proto2")
        )
    with pytest.raises(protobuf.ProtobufSchemaError, match="protoc"):
        protobuf.validate(_proto("message A { int32 x = ; }"))


def test_the_fixture_chain_is_backward_compatible():
    assert check_chain([V1, V2], Mode.BACKWARD, "PROTOBUF") == []
    assert check_chain([V1, V2], Mode.FULL_ALL, "PROTOBUF") == []


@pytest.mark.parametrize(
    ("old", "new", "rule"),
    [
        ("int32 x = 1;", "string x = 1;", "wire_type_changed"),
        ("int32 x = 1;", "repeated int32 x = 1;", "label_changed"),
        ("int32 x = 1;", "reserved 1; string y = 2;", None),
        ("int32 x = 1;", "int32 x = 2;", "name_renumbered"),
        ("sint32 x = 1;", "sint64 x = 1;", None),
        ("int32 x = 1;", "sint32 x = 1;", "wire_type_changed"),
        ("string x = 1;", "bytes x = 1;", None),
    ],
)
def test_protobuf_rules(old: str, new: str, rule: str | None):
    found = reader_violations(
        _proto(f"message A {{ {new} }}"), _proto(f"message A {{ {old} }}"), "PROTOBUF"
    )
    assert [v.rule for v in found] == ([rule] if rule else [])


def test_a_reserved_number_is_never_used_again():
    v1 = _proto("message A { int32 x = 1; int32 y = 2; }")
    v2 = _proto('message A { reserved 2; reserved "y"; int32 x = 1; }')
    v3 = _proto("message A { int32 x = 1; string z = 2; }")
    assert check_chain([v1, v2], Mode.BACKWARD, "PROTOBUF") == []
    found = check_chain([v1, v2, v3], Mode.BACKWARD, "PROTOBUF")
    assert [(v.rule, v.version) for v in found] == [("reserved_reused", 3)]
    assert check_chain([v1, v2, v3], Mode.NONE, "PROTOBUF") == []


def test_required_added_breaks_backward_in_proto2():
    old = _proto("message A { optional int32 x = 1; }", "proto2")
    new = _proto("message A { optional int32 x = 1; required int32 y = 2; }", "proto2")
    assert [v.rule for v in check_chain([old, new], Mode.BACKWARD, "PROTOBUF")] == [
        "required_added"
    ]
    assert check_chain([old, new], Mode.FORWARD, "PROTOBUF") == []


def test_the_layout_loads_proto_versions(tmp_path: Path):
    from floe.registry.layout import load_sources

    (source,) = [s for s in load_sources(FIXTURE_PROJECT / "schemas") if s.name == "trips"]
    assert source.data_format == "PROTOBUF" and len(source.definitions) == 2
    assert source.check() == []


def test_framed_records_decode_through_the_registry(tmp_path: Path):
    from floe.feeds.kinds.stream import schemas_dir, sync_local_registry
    from floe.registry import codec

    registry = sync_local_registry(tmp_path, schemas_dir(FIXTURE_PROJECT))
    v2 = registry.versions("trips")[-1]
    framed = codec.frame({"trip_id": 3, "rating": 4.5}, v2, compress=True)
    version, record = codec.unframe(framed, registry)
    assert (version.version_number, record["trip_id"], record["rating"]) == (2, 3, 4.5)
    with pytest.raises(codec.ProtobufDecodeError):
        codec.decode_payload(b"\x08\xff\xff", v2)
