"""Modes: which earlier versions a new version is checked against, in which direction,
and what a chain check reports."""

from __future__ import annotations

import json

import pytest

from floe.registry.compat import (
    Mode,
    check_chain,
    check_new_version,
    compared_versions,
    directions,
)
from tests.registry.compat.evolution import MISSING, I, S, f, obj, rec


@pytest.mark.parametrize(
    ("mode", "previous", "against", "ways"),
    [
        (Mode.NONE, 3, [], ()),
        (Mode.DISABLED, 3, [], ()),
        (Mode.BACKWARD, 3, [3], ("backward",)),
        (Mode.BACKWARD_ALL, 3, [1, 2, 3], ("backward",)),
        (Mode.FORWARD, 3, [3], ("forward",)),
        (Mode.FORWARD_ALL, 3, [1, 2, 3], ("forward",)),
        (Mode.FULL, 3, [3], ("backward", "forward")),
        (Mode.FULL_ALL, 3, [1, 2, 3], ("backward", "forward")),
        (Mode.FULL_ALL, 0, [], ("backward", "forward")),
    ],
)
def test_each_mode_names_its_versions_and_directions(
    mode: Mode, previous: int, against: list[int], ways: tuple[str, ...]
) -> None:
    assert compared_versions(mode, previous) == against
    assert directions(mode) == ways
    assert compared_versions(mode.value.lower(), previous) == against  # parsed like YAML


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
    with pytest.raises(ValueError, match="AVRO, JSON or PROTOBUF"):
        check_new_version(A1, [A1], "BACKWARD", "THRIFT")
