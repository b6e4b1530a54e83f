"""floe's adapter where dbt-spark bends dbt's contract: columns, relation matching, errors
(pure Python: no SparkSession)."""

from __future__ import annotations

import pytest
from dbt.adapters.exceptions import ApproximateMatchError
from dbt_common.exceptions import DbtDatabaseError, DbtRuntimeError

from floe.adapter import (
    FloeColumn,
    FloeConnectionManager,
    FloeRelation,
    FloeStatementError,
    cascaded_namespace,
)


@pytest.mark.parametrize(
    ("dtype", "string", "integer", "numeric", "float_"),
    [
        ("string", True, False, False, False),
        ("varchar(10)", True, False, False, False),
        ("int", False, True, False, False),
        ("bigint", False, True, False, False),
        ("tinyint", False, True, False, False),
        ("decimal(10,2)", False, False, True, False),
        ("double", False, False, False, True),
        ("date", False, False, False, False),
    ],
)
def test_column_kinds_know_sparks_type_names(dtype, string, integer, numeric, float_):
    column = FloeColumn(column="c", dtype=dtype)
    assert (column.is_string(), column.is_integer(), column.is_numeric(), column.is_float()) == (
        string,
        integer,
        numeric,
        float_,
    )


def test_unquoted_names_match_case_insensitively_quoted_ones_exactly():
    listed = FloeRelation.create(schema="s", identifier="MODEL", type="table")
    assert listed.matches(schema="s", identifier="model")
    assert not listed.matches(schema="s", identifier="other")
    quoted = FloeRelation.create(
        schema="s", identifier="MODEL", quote_policy={"identifier": True, "schema": True}
    )
    with pytest.raises(ApproximateMatchError):
        quoted.matches(schema="s", identifier="model")


def manager() -> FloeConnectionManager:
    return FloeConnectionManager.__new__(FloeConnectionManager)


def test_sql_errors_are_database_errors():
    with (
        pytest.raises(DbtDatabaseError, match="TABLE_OR_VIEW_NOT_FOUND") as raised,
        manager().exception_handler("select * from nope"),
    ):
        raise DbtRuntimeError("[TABLE_OR_VIEW_NOT_FOUND] The table `nope` cannot be found")
    assert "Runtime Error" not in str(raised.value)  # not dbt-spark's wrapping


def test_floes_own_refusals_keep_their_type():
    with (
        pytest.raises(FloeStatementError, match="unknown statement mark"),
        manager().exception_handler("/* floe:nope */ select 1"),
    ):
        raise FloeStatementError("unknown statement mark floe:nope")


@pytest.mark.parametrize(
    ("sql", "namespace"),
    [
        ("drop schema foo cascade", "foo"),
        ('/* {"app": "dbt"} */\nDROP SCHEMA IF EXISTS `a-b` CASCADE;', "`a-b`"),
        ("drop database foo cascade", "foo"),
        ("drop schema foo", None),  # no cascade: Iceberg's refusal stands
        ("drop table foo cascade", None),
        ("drop schema a.b cascade", None),  # one namespace level only
        ("drop schema foo cascade; drop table t", None),
    ],
)
def test_raw_drop_schema_cascade_is_recognised(sql, namespace):
    assert cascaded_namespace(sql) == namespace
