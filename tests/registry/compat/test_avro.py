"""Avro resolution rules, one evolution case each, under every compatibility mode.

Cases are ``evolution.Case`` rows: old → new with the expected (path, rule) in each
direction (see ``evolution.py``).
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from floe.registry.compat import Mode, reader_violations
from tests.registry.compat.evolution import (
    MISSING,
    TYPE,
    Case,
    assert_case,
    f,
    load_schema,
    rec,
)

COLOR = {"type": "enum", "name": "Color", "symbols": ["RED", "BLUE"]}
COLOR3 = {"type": "enum", "name": "Color", "symbols": ["RED", "BLUE", "GREEN"]}
ADDRESS = rec(f("street", "string"), name="Address")
ADDRESS2 = rec(f("street", "string"), f("zip", "string"), name="Address")

MOVIES_SEED_V2 = json.loads(json.dumps(load_schema("floe/movies/v2.avsc")))
MOVIES_SEED_V2["fields"][3] = {"name": "COUNTRY", "type": "string"}  # as the seed prints it

AVRO_CASES = [
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
        load_schema("floe/movies/v1.avsc"),
        load_schema("floe/movies/v2.avsc"),
        None,
        None,
    ),
    Case(
        "avro-movies-seed-literal-country",
        "AVRO",
        load_schema("floe/movies/v1.avsc"),
        MOVIES_SEED_V2,
        ("COUNTRY", MISSING),
        None,
    ),
]


@pytest.mark.parametrize("mode", list(Mode), ids=lambda m: m.value)
@pytest.mark.parametrize("case", AVRO_CASES, ids=lambda c: c.id)
def test_evolution_case(case: Case, mode: Mode) -> None:
    assert_case(case, mode)


def test_case_count() -> None:
    assert len(AVRO_CASES) >= 30


# ---- properties: a schema always reads its own data

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
