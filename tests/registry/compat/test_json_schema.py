"""JSON Schema rules ("data valid under the writer is valid under the reader"), one
evolution case each, under every compatibility mode; plus properties checked with
hypothesis: a schema reads itself, ``{}`` reads anything, and an accepted pair never
lets a sampled writer-valid instance break the reader.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from floe.registry.compat import Mode, reader_violations
from tests.registry.compat.evolution import Case, I, N, S, assert_case, load_schema, obj

JSON_CASES = [
    Case(
        "json-weather-v1-v2",
        "JSON",
        load_schema("floe/weather_report/v1.json"),
        load_schema("floe/weather_report/v2.json"),
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
        load_schema("floe/ventilator/v1.json"),
        load_schema("floe/ventilator/v1.json"),
        None,
        None,
    ),
]


@pytest.mark.parametrize("mode", list(Mode), ids=lambda m: m.value)
@pytest.mark.parametrize("case", JSON_CASES, ids=lambda c: c.id)
def test_evolution_case(case: Case, mode: Mode) -> None:
    assert_case(case, mode)


def test_case_count() -> None:
    assert len(JSON_CASES) >= 20


# ---- properties

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
