"""Table-driven evolution cases: expected verdict per compatibility mode.

Each case is one evolution old → new with the expected outcome in each direction:
``None`` when compatible, else ``(path, rule)`` of the violation that must be reported.
BACKWARD checks the backward direction (new reads old), FORWARD the forward one (old
reads new), FULL both, NONE neither, DISABLED rejects any second version. With only
two versions the ``_ALL`` modes must agree with their plain forms; three-version cases
below show where they differ.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from floe.registry.compat import (
    IncompatibleSchemaError,
    Mode,
    Violation,
    check_chain,
    check_new_version,
    reader_violations,
)

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"

Expect = tuple[str, str] | None


@dataclass(frozen=True)
class Case:
    id: str
    fmt: str
    old: object
    new: object
    backward: Expect
    forward: Expect


def rec(*fields: dict, name: str = "R", **extra: object) -> dict:
    return {"type": "record", "name": name, "fields": list(fields), **extra}


def f(name: str, type_: object, **extra: object) -> dict:
    return {"name": name, "type": type_, **extra}


def obj(props: dict, required: list[str] | None = None, closed: bool | None = None) -> dict:
    schema: dict = {"type": "object", "properties": props}
    if required:
        schema["required"] = required
    if closed is not None:
        schema["additionalProperties"] = not closed
    return schema


S = {"type": "string"}
I = {"type": "integer"}  # noqa: E741
N = {"type": "number"}
COLOR = {"type": "enum", "name": "Color", "symbols": ["RED", "BLUE"]}
COLOR3 = {"type": "enum", "name": "Color", "symbols": ["RED", "BLUE", "GREEN"]}
ADDRESS = rec(f("street", "string"), name="Address")
ADDRESS2 = rec(f("street", "string"), f("zip", "string"), name="Address")
MISSING = "missing_default"
TYPE = "type_mismatch"


def _load(rel: str) -> object:
    return json.loads((SCHEMAS / rel).read_text())


MOVIES_SEED_V2 = json.loads(json.dumps(_load("floe/movies/v2.avsc")))
MOVIES_SEED_V2["fields"][3] = {"name": "COUNTRY", "type": "string"}  # as the seed prints it

CASES = [
    # ---- Avro: fields
    Case(
        "avro-add-field-default",
        "AVRO",
        rec(f("a", "int")),
        rec(f("a", "int"), f("b", "int", default=0)),
        None,
        None,
    ),
    Case(
        "avro-add-field-no-default",
        "AVRO",
        rec(f("a", "int")),
        rec(f("a", "int"), f("b", "int")),
        ("b", MISSING),
        None,
    ),
    Case(
        "avro-remove-field-default",
        "AVRO",
        rec(f("a", "int"), f("b", "int", default=0)),
        rec(f("a", "int")),
        None,
        None,
    ),
    Case(
        "avro-remove-field-no-default",
        "AVRO",
        rec(f("a", "int"), f("b", "int")),
        rec(f("a", "int")),
        None,
        ("b", MISSING),
    ),
    Case(
        "avro-add-nullable-null-default",
        "AVRO",
        rec(f("a", "int")),
        rec(f("a", "int"), f("c", ["null", "string"], default=None)),
        None,
        None,
    ),
    # ---- Avro: promotions
    Case("avro-int-to-long", "AVRO", rec(f("a", "int")), rec(f("a", "long")), None, ("a", TYPE)),
    Case("avro-long-to-int", "AVRO", rec(f("a", "long")), rec(f("a", "int")), ("a", TYPE), None),
    Case("avro-int-to-float", "AVRO", rec(f("a", "int")), rec(f("a", "float")), None, ("a", TYPE)),
    Case(
        "avro-long-to-double", "AVRO", rec(f("a", "long")), rec(f("a", "double")), None, ("a", TYPE)
    ),
    Case(
        "avro-float-to-double",
        "AVRO",
        rec(f("a", "float")),
        rec(f("a", "double")),
        None,
        ("a", TYPE),
    ),
    Case(
        "avro-double-to-float",
        "AVRO",
        rec(f("a", "double")),
        rec(f("a", "float")),
        ("a", TYPE),
        None,
    ),
    Case("avro-string-to-bytes", "AVRO", rec(f("a", "string")), rec(f("a", "bytes")), None, None),
    Case(
        "avro-int-to-string",
        "AVRO",
        rec(f("a", "int")),
        rec(f("a", "string")),
        ("a", TYPE),
        ("a", TYPE),
    ),
    Case(
        "avro-boolean-to-int",
        "AVRO",
        rec(f("a", "boolean")),
        rec(f("a", "int")),
        ("a", TYPE),
        ("a", TYPE),
    ),
    # ---- Avro: enums
    Case(
        "avro-enum-add-symbol",
        "AVRO",
        rec(f("c", COLOR)),
        rec(f("c", COLOR3)),
        None,
        ("c", "enum_symbol_removed"),
    ),
    Case(
        "avro-enum-remove-symbol",
        "AVRO",
        rec(f("c", COLOR3)),
        rec(f("c", COLOR)),
        ("c", "enum_symbol_removed"),
        None,
    ),
    Case(
        "avro-enum-add-symbol-old-has-default",
        "AVRO",
        rec(f("c", {**COLOR, "default": "RED"})),
        rec(f("c", {**COLOR3, "default": "RED"})),
        None,
        None,
    ),
    Case(
        "avro-enum-renamed",
        "AVRO",
        rec(f("c", COLOR)),
        rec(f("c", {**COLOR, "name": "Colour"})),
        ("c", "name_mismatch"),
        ("c", "name_mismatch"),
    ),
    # ---- Avro: unions
    Case(
        "avro-nullable-made-required",
        "AVRO",
        rec(f("a", ["null", "string"], default=None)),
        rec(f("a", "string")),
        ("a", "union_branch_unreadable"),
        None,
    ),
    Case(
        "avro-required-made-nullable",
        "AVRO",
        rec(f("a", "string")),
        rec(f("a", ["null", "string"], default=None)),
        None,
        ("a", "union_branch_unreadable"),
    ),
    Case(
        "avro-union-add-branch",
        "AVRO",
        rec(f("a", ["null", "string"])),
        rec(f("a", ["null", "string", "int"])),
        None,
        ("a", "union_branch_unreadable"),
    ),
    Case(
        "avro-union-reordered",
        "AVRO",
        rec(f("a", ["null", "string"])),
        rec(f("a", ["string", "null"])),
        None,
        None,
    ),
    Case(
        "avro-union-branch-promoted",
        "AVRO",
        rec(f("a", ["null", "int"])),
        rec(f("a", ["null", "long"])),
        None,
        ("a", "union_branch_unreadable"),
    ),
    # ---- Avro: nesting, named types, aliases, containers
    Case(
        "avro-nested-add-no-default",
        "AVRO",
        rec(f("addr", ADDRESS)),
        rec(f("addr", ADDRESS2)),
        ("addr.zip", MISSING),
        None,
    ),
    Case(
        "avro-named-ref-reused",
        "AVRO",
        rec(f("home", ADDRESS), f("work", "Address")),
        rec(f("home", ADDRESS2), f("work", "Address")),
        ("home.zip", MISSING),
        None,
    ),
    Case(
        "avro-field-renamed-with-alias",
        "AVRO",
        rec(f("name", "string")),
        rec(f("full_name", "string", aliases=["name"])),
        None,
        ("name", MISSING),
    ),
    Case(
        "avro-record-renamed-with-alias",
        "AVRO",
        rec(f("a", "int"), name="Old"),
        rec(f("a", "int"), name="New", aliases=["Old"]),
        None,
        ("", "name_mismatch"),
    ),
    Case(
        "avro-record-renamed",
        "AVRO",
        rec(f("a", "int"), name="Old"),
        rec(f("a", "int"), name="New"),
        ("", "name_mismatch"),
        ("", "name_mismatch"),
    ),
    Case(
        "avro-array-items-promoted",
        "AVRO",
        rec(f("t", {"type": "array", "items": "int"})),
        rec(f("t", {"type": "array", "items": "long"})),
        None,
        ("t[]", TYPE),
    ),
    Case(
        "avro-map-values-changed",
        "AVRO",
        rec(f("m", {"type": "map", "values": "string"})),
        rec(f("m", {"type": "map", "values": "int"})),
        ("m{}", TYPE),
        ("m{}", TYPE),
    ),
    Case(
        "avro-fixed-size-changed",
        "AVRO",
        rec(f("h", {"type": "fixed", "name": "H", "size": 16})),
        rec(f("h", {"type": "fixed", "name": "H", "size": 32})),
        ("h", "fixed_size_mismatch"),
        ("h", "fixed_size_mismatch"),
    ),
    Case(
        "avro-logical-timestamp-precision",
        "AVRO",
        rec(f("t", {"type": "long", "logicalType": "timestamp-millis"})),
        rec(f("t", {"type": "long", "logicalType": "timestamp-micros"})),
        None,
        None,
    ),
    Case(
        "avro-recursive-add-default",
        "AVRO",
        rec(f("v", "int"), f("next", ["null", "Node"], default=None), name="Node"),
        rec(
            f("v", "int"),
            f("next", ["null", "Node"], default=None),
            f("w", "int", default=1),
            name="Node",
        ),
        None,
        None,
    ),
    Case(
        "avro-movies-repo-v1-v2",
        "AVRO",
        _load("floe/movies/v1.avsc"),
        _load("floe/movies/v2.avsc"),
        None,
        None,
    ),
    Case(
        "avro-movies-seed-literal-country",
        "AVRO",
        _load("floe/movies/v1.avsc"),
        MOVIES_SEED_V2,
        ("COUNTRY", MISSING),
        None,
    ),
    # ---- JSON Schema
    Case(
        "json-weather-v1-v2",
        "JSON",
        _load("floe/weather_report/v1.json"),
        _load("floe/weather_report/v2.json"),
        None,
        ("location.country", "additional_properties_closed"),
    ),
    Case(
        "json-add-required-property",
        "JSON",
        obj({"a": S}, ["a"]),
        obj({"a": S, "b": S}, ["a", "b"]),
        ("b", "required_added"),
        None,
    ),
    Case(
        "json-add-optional-closed",
        "JSON",
        obj({"a": S}, closed=True),
        obj({"a": S, "b": S}, closed=True),
        None,
        ("b", "additional_properties_closed"),
    ),
    Case(
        "json-add-optional-open",
        "JSON",
        obj({"a": S}),
        obj({"a": S, "b": S}),
        ("b", "type_changed"),
        None,
    ),
    Case("json-add-unconstrained-open", "JSON", obj({"a": S}), obj({"a": S, "b": {}}), None, None),
    Case(
        "json-remove-property-closed",
        "JSON",
        obj({"a": S, "b": S}, closed=True),
        obj({"a": S}, closed=True),
        ("b", "additional_properties_closed"),
        None,
    ),
    Case(
        "json-remove-property-open",
        "JSON",
        obj({"a": S, "b": S}),
        obj({"a": S}),
        None,
        ("b", "type_changed"),
    ),
    Case(
        "json-close-content-model",
        "JSON",
        obj({"a": S}),
        obj({"a": S}, closed=True),
        ("", "content_model_closed"),
        None,
    ),
    Case(
        "json-open-content-model",
        "JSON",
        obj({"a": S}, closed=True),
        obj({"a": S}, closed=False),
        None,
        ("", "content_model_closed"),
    ),
    Case(
        "json-integer-to-number", "JSON", obj({"a": I}), obj({"a": N}), None, ("a", "type_changed")
    ),
    Case(
        "json-number-to-integer", "JSON", obj({"a": N}), obj({"a": I}), ("a", "type_changed"), None
    ),
    Case(
        "json-string-to-integer",
        "JSON",
        obj({"a": S}),
        obj({"a": I}),
        ("a", "type_changed"),
        ("a", "type_changed"),
    ),
    Case(
        "json-enum-add-value",
        "JSON",
        obj({"d": {"enum": ["x", "y"]}}),
        obj({"d": {"enum": ["x", "y", "z"]}}),
        None,
        ("d", "enum_value_removed"),
    ),
    Case(
        "json-enum-remove-value",
        "JSON",
        obj({"d": {"enum": ["x", "y"]}}),
        obj({"d": {"enum": ["x"]}}),
        ("d", "enum_value_removed"),
        None,
    ),
    Case(
        "json-enum-added",
        "JSON",
        obj({"d": S}),
        obj({"d": {"type": "string", "enum": ["x"]}}),
        ("d", "enum_added"),
        None,
    ),
    Case(
        "json-nested-required-added",
        "JSON",
        obj({"loc": obj({"city": S}, ["city"], closed=True)}),
        obj({"loc": obj({"city": S, "zip": S}, ["city", "zip"], closed=True)}),
        ("loc.zip", "required_added"),
        ("loc.zip", "additional_properties_closed"),
    ),
    Case(
        "json-optional-made-required",
        "JSON",
        obj({"a": S, "b": S}, ["a"]),
        obj({"a": S, "b": S}, ["a", "b"]),
        ("b", "required_added"),
        None,
    ),
    Case(
        "json-required-made-optional",
        "JSON",
        obj({"a": S, "b": S}, ["a", "b"]),
        obj({"a": S, "b": S}, ["a"]),
        None,
        ("b", "required_added"),
    ),
    Case(
        "json-made-nullable",
        "JSON",
        obj({"a": S}),
        obj({"a": {"type": ["string", "null"]}}),
        None,
        ("a", "type_changed"),
    ),
    Case(
        "json-array-items-widened",
        "JSON",
        obj({"t": {"type": "array", "items": I}}),
        obj({"t": {"type": "array", "items": N}}),
        None,
        ("t[]", "type_changed"),
    ),
    Case(
        "json-minimum-tightened",
        "JSON",
        obj({"c": {"type": "integer", "minimum": 0}}),
        obj({"c": {"type": "integer", "minimum": 10}}),
        ("c", "range_narrowed"),
        None,
    ),
    Case(
        "json-ref-definition-required-added",
        "JSON",
        {**obj({"a": {"$ref": "#/definitions/A"}}), "definitions": {"A": obj({"x": S})}},
        {**obj({"a": {"$ref": "#/definitions/A"}}), "definitions": {"A": obj({"x": S}, ["x"])}},
        ("a.x", "required_added"),
        None,
    ),
    Case(
        "json-anyof-writer-branches",
        "JSON",
        obj({"v": {"anyOf": [I, S]}}),
        obj({"v": {"type": ["integer", "string"]}}),
        None,
        None,
    ),
    Case(
        "json-ventilator-unchanged",
        "JSON",
        _load("floe/ventilator/v1.json"),
        _load("floe/ventilator/v1.json"),
        None,
        None,
    ),
]


def _expected(case: Case, mode: Mode) -> list[Expect]:
    """The violations (path, rule) the mode must report for this case, [] when accepted."""
    base = mode.value.removesuffix("_ALL")
    if base == "NONE":
        return []
    if base == "DISABLED":
        return [("", "versioning_disabled")]
    out: list[Expect] = []
    if base in ("BACKWARD", "FULL") and case.backward:
        out.append(case.backward)
    if base in ("FORWARD", "FULL") and case.forward:
        out.append(case.forward)
    return out


@pytest.mark.parametrize("mode", list(Mode), ids=lambda m: m.value)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_evolution_case(case: Case, mode: Mode) -> None:
    found = check_new_version(case.new, [case.old], mode, case.fmt)
    expected = _expected(case, mode)
    if not expected:
        assert found == [], [str(v) for v in found]
        return
    reported = {(v.path, v.rule) for v in found}
    for item in expected:
        assert item in reported, (item, [str(v) for v in found])
    for v in found:  # every message names the versions, the field and the rule
        assert v.version == 2 and v.rule in str(v) and (v.path or "<root>") in str(v)


def test_case_count() -> None:
    assert len(CASES) >= 40


# ---- where the _ALL modes differ: Avro resolution is not transitive

A1 = rec(f("a", "int"))
A2 = rec(f("a", "int"), f("b", "int", default=0))
A3 = rec(f("a", "int"), f("b", "int"))


@pytest.mark.parametrize(
    ("mode", "rejected_against"),
    [
        (Mode.BACKWARD, None),
        (Mode.BACKWARD_ALL, 1),
        (Mode.FULL, None),
        (Mode.FULL_ALL, 1),
        (Mode.FORWARD_ALL, None),
    ],
)
def test_all_modes_check_every_earlier_version(mode: Mode, rejected_against: int | None) -> None:
    found = check_new_version(A3, [A1, A2], mode, "AVRO")
    if rejected_against is None:
        assert found == []
    else:
        assert {(v.path, v.rule, v.against) for v in found} == {("b", MISSING, 1)}


def test_forward_all_against_first_version() -> None:
    v1 = rec(f("a", "int"), f("b", "int"))
    v2 = rec(f("a", "int"), f("b", "int", default=0))
    v3 = rec(f("a", "int"))
    assert check_new_version(v3, [v1, v2], Mode.FORWARD, "AVRO") == []
    found = check_new_version(v3, [v1, v2], Mode.FORWARD_ALL, "AVRO")
    assert [(v.path, v.rule, v.against, v.direction) for v in found] == [
        ("b", MISSING, 1, "forward")
    ]


def test_json_backward_all_sees_an_old_incompatible_jump() -> None:
    v1, v2, v3 = obj({"a": S}), obj({"a": I}), obj({"a": I})  # v2 registered under NONE
    assert check_new_version(v3, [v1, v2], "BACKWARD", "JSON") == []
    found = check_new_version(v3, [v1, v2], "BACKWARD_ALL", "JSON")
    assert [(v.path, v.rule, v.against) for v in found] == [("a", "type_changed", 1)]


def test_disabled_allows_the_first_version_only() -> None:
    assert check_chain([A1], "DISABLED", "AVRO") == []
    assert [v.rule for v in check_chain([A1, A1], "DISABLED", "AVRO")] == ["versioning_disabled"]


def test_chain_reports_each_bad_step() -> None:
    chain = [
        A1,
        rec(f("a", "int"), f("b", "int")),
        rec(f("a", "int"), f("b", "int"), f("c", "int")),
    ]
    found = check_chain(chain, "BACKWARD", "AVRO")
    assert [(v.version, v.against, v.path) for v in found] == [(2, 1, "b"), (3, 2, "c")]


def test_invalid_definitions_are_violations() -> None:
    assert [v.rule for v in check_new_version("{not json", [], "BACKWARD", "AVRO")] == [
        "invalid_schema"
    ]
    bad_avro = rec(f("a", "nosuchtype"))
    assert [v.rule for v in check_new_version(bad_avro, [], "NONE", "AVRO")] == ["invalid_schema"]
    bad_json = {"type": "objekt"}
    assert [v.rule for v in check_new_version(bad_json, [], "NONE", "JSON")] == ["invalid_schema"]


def test_definitions_may_be_text() -> None:
    old, new = json.dumps(A1), json.dumps(rec(f("a", "int"), f("b", "int")))
    assert [v.path for v in check_new_version(new, [old], "BACKWARD", "AVRO")] == ["b"]


def test_unknown_mode_and_format_are_errors() -> None:
    with pytest.raises(ValueError, match="BACKWARD"):
        check_new_version(A1, [A1], "SIDEWAYS", "AVRO")
    with pytest.raises(ValueError, match="AVRO or JSON"):
        check_new_version(A1, [A1], "BACKWARD", "PROTOBUF")


def test_incompatible_error_names_field_and_rule() -> None:
    violation = Violation("customer.email", MISSING, "no default", 2, 1, "backward")
    err = IncompatibleSchemaError("unicorn", [violation])
    assert err.code == "incompatible_schema"
    assert "v2 vs v1 (backward): customer.email: missing_default" in str(err)


# ---- properties: a schema always reads its own data; JSON widening is safe

json_leaf = st.sampled_from([S, I, N, {"type": "boolean"}, {"enum": ["a", "b"]}, {}])
json_objects = st.recursive(
    json_leaf,
    lambda inner: st.builds(
        lambda props, closed, req: obj(props, [p for p in props if req], closed),
        st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3),
        st.sampled_from([None, True, False]),
        st.booleans(),
    ),
    max_leaves=6,
)


@settings(max_examples=60, deadline=None)
@given(json_objects)
def test_json_schema_reads_itself(schema: dict) -> None:
    assert reader_violations(schema, schema, "JSON") == []


@settings(max_examples=60, deadline=None)
@given(json_objects)
def test_json_accept_anything_reads_everything(schema: dict) -> None:
    assert reader_violations({}, schema, "JSON") == []


avro_leaf = st.sampled_from(["int", "long", "string", ["null", "string"], COLOR])


@settings(max_examples=40, deadline=None)
@given(st.lists(avro_leaf, min_size=1, max_size=4))
def test_avro_schema_reads_itself(types: list) -> None:
    fields, seen_enum = [], False
    for i, t in enumerate(types):
        if t == COLOR:
            t = "Color" if seen_enum else COLOR  # a named type is defined once
            seen_enum = True
        fields.append(f(f"f{i}", t))
    schema = rec(*fields)
    assert reader_violations(schema, schema, "AVRO") == []


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 5)
    | st.floats(-5, 5, allow_nan=False)
    | st.sampled_from(["a", "b", "x"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), inner, max_size=4)
    ),
    max_leaves=8,
)


@settings(max_examples=150, deadline=None)
@given(json_objects, json_objects, st.lists(json_values, min_size=5, max_size=15))
def test_json_verdict_is_sound(writer: dict, reader: dict, instances: list) -> None:
    """When the checker accepts, no sampled instance valid for the writer breaks the reader."""
    import jsonschema

    if reader_violations(reader, writer, "JSON"):
        return
    w_ok = jsonschema.Draft7Validator(writer).is_valid
    r_ok = jsonschema.Draft7Validator(reader).is_valid
    for instance in instances:
        if w_ok(instance):
            assert r_ok(instance), (writer, reader, instance)
