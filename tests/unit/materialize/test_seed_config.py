"""Seed config checks and relation rendering that need no Spark (floe.materialize.seeds)."""

from __future__ import annotations

import datetime as dt
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


def test_patterned_columns_convert_exactly_in_python():
    from floe.materialize.seeds import native_values

    assert native_values("bigint", ["1", None, "-7"]) == [1, None, -7]
    assert native_values("double", ["0.1", "2"]) == [0.1, 2.0]
    assert native_values("boolean", ["true", "false", None]) == [True, False, None]
    assert native_values("date", ["2024-02-29"]) == [dt.date(2024, 2, 29)]
    # beyond bigint, or a type only Spark's cast judges: left to the cast, which names it
    assert native_values("bigint", ["9223372036854775808"]) is None
    assert native_values("timestamp", ["2024-01-01 00:00:00"]) is None


def test_read_seed_marks_only_pattern_typed_columns(tmp_path: Path):
    from dbt.adapters.spark import SparkAdapter

    csv = tmp_path / "s.csv"
    csv.write_text('id,amount,code,grouped\n1,2.5,007,"1,000"\n2,,010,"2,000"\n')
    seed = read_seed(
        csv,
        delimiter=",",
        column_types={"code": "string"},
        convert_type=SparkAdapter.convert_type,
    )
    assert seed.types[:3] == ["bigint", "double", "string"]
    assert seed.patterned == [True, True, False, False]  # column_types, agate-typed: cast


def test_null_spellings_are_null_however_padded(tmp_path: Path):
    csv = tmp_path / "s.csv"
    csv.write_text("a,b\n1, null \n,NULL\n3,x\n4,nullable\n")
    seed = read_seed(csv, delimiter=",", column_types={"b": "string"}, convert_type=_never)
    assert seed.cells == [["1", None, "3", "4"], [None, None, "x", "nullable"]]
    assert seed.types == ["bigint", "string"]
