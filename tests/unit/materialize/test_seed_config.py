"""Seed config checks and relation rendering that need no Spark (floe.materialize.seeds)."""

from __future__ import annotations

from pathlib import Path

import pytest

from floe.adapter import FloeRelation
from floe.materialize.seeds import (
    SeedConfigError,
    check_delimiter,
    check_unquoted_names,
    read_seed,
    seed_view_name,
)


def _never(_table: object, _index: int) -> str:
    raise AssertionError("no agate inference expected")


@pytest.mark.parametrize("delimiter", ["", ";;", 1])
def test_a_delimiter_is_one_character(delimiter):
    with pytest.raises(SeedConfigError, match="1-character"):
        check_delimiter(delimiter)


def test_an_unset_delimiter_is_dbts_comma():
    assert check_delimiter(None) == "," and check_delimiter("|") == "|"


@pytest.mark.parametrize("name", ["a,b", "first name", "a.b", "123", "x`y", ""])
def test_unquoted_names_must_be_plain_identifiers(name):
    with pytest.raises(SeedConfigError, match="syntax error"):
        check_unquoted_names([name], ",")


def test_plain_names_pass_unquoted():
    check_unquoted_names(["id", "_x", "col_2", "2nd"], ",")


def test_quote_columns_decides_whether_a_split_header_is_refused(tmp_path: Path):
    csv = tmp_path / "s.csv"
    csv.write_text("id,name\n1,a\n")
    with pytest.raises(SeedConfigError, match="split at ';'"):
        read_seed(csv, delimiter=";", column_types={}, convert_type=_never, quote_columns=False)
    seed = read_seed(csv, delimiter=";", column_types={"id,name": "string"}, convert_type=_never)
    assert (seed.names, seed.types, seed.rows) == (["id,name"], ["string"], 1)


def test_a_name_spark_cannot_read_unquoted_renders_backquoted():
    dotted = FloeRelation.create(schema="staging", identifier="seed.with.dots")
    assert dotted.render() == "staging.`seed.with.dots`"
    assert FloeRelation.create(schema="staging", identifier="people").render() == ("staging.people")
    # a name given already quoted (dbt-spark's delta.`/path`) is left as given
    assert FloeRelation.create(identifier="delta.`/p`").render() == "delta.`/p`"


def test_seed_views_have_plain_distinct_names():
    a, b = seed_view_name("staging.`a.b`"), seed_view_name("staging.a_b")
    assert a != b and a.replace("_", "").isalnum() and a.isascii()
