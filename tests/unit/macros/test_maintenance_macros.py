"""The iceberg_* run-operations: the CALL they run, their argument checks."""

from __future__ import annotations

import re

import pytest

from tests.unit.macros.jinja_harness import CompilerError


def test_compact_calls_rewrite_data_files(render):
    render.call("iceberg_compact", "marts.mlb_data", "sort", 4)
    assert render.queries == [
        "call lake.system.rewrite_data_files(table => 'marts.mlb_data', strategy => 'sort', "
        "options => map('min-input-files', '4'))"
    ]


def test_expire_keeps_the_last_snapshots_and_cuts_by_age(render):
    render.call("iceberg_expire_snapshots", "marts.t", 3, 7)
    (sql,) = render.queries
    assert re.fullmatch(
        r"call lake\.system\.expire_snapshots\(table => 'marts\.t', retain_last => 3, "
        r"older_than => timestamp '\d{4}-\d\d-\d\d \d\d:\d\d:\d\d'\)",
        sql,
    )


def test_orphans_and_manifests(render):
    render.call("iceberg_remove_orphan_files", "marts.t", 3)
    render.call("iceberg_rewrite_manifests", "marts.t")
    assert render.queries[0].startswith(
        "call lake.system.remove_orphan_files(table => 'marts.t', older_than => timestamp '"
    )
    assert render.queries[1] == "call lake.system.rewrite_manifests(table => 'marts.t')"


def test_table_name_is_an_escaped_literal(render):
    render.call("iceberg_rewrite_manifests", "marts.t') --")
    assert render.queries == [r"call lake.system.rewrite_manifests(table => 'marts.t\') --')"]


@pytest.mark.parametrize(
    ("macro", "args", "message"),
    [
        ("iceberg_compact", ("t", "zorder"), "strategy must be binpack or sort, not 'zorder'"),
        ("iceberg_compact", ("t", "binpack", "2) --"), "min_input_files must be an integer"),
        ("iceberg_expire_snapshots", ("t", "5 or 1", 7), "retain_last must be an integer"),
        ("iceberg_expire_snapshots", ("t", 5, True), "older_than_days must be a number"),
        ("iceberg_remove_orphan_files", ("t", "3 days"), "older_than_days must be a number"),
    ],
)
def test_bad_arguments_fail_before_any_sql_runs(render, macro, args, message):
    with pytest.raises(CompilerError, match=re.escape(message)):
        render.call(macro, *args)
    assert render.queries == []
