"""Utilities: point-in-time joins, schema names, literals, options."""

from __future__ import annotations

import pytest

from tests.unit.macros.jinja_harness import CompilerError, assert_parses


def test_as_of_day_grain_is_inclusive_on_dates(render):
    cond = render.sql("as_of", "o.arrival_ts", "p")
    assert cond == (
        "(cast(o.arrival_ts as date) >= p.valid_from and cast(o.arrival_ts as date) <= p.valid_to)"
    )
    assert_parses(f"select 1 from o left join p on o.item = p.item and {cond}")


def test_as_of_timestamp_grain_is_half_open_with_null_for_current(render):
    cond = render.sql("as_of", "e.ts", "s", "dbt_valid_from", "dbt_valid_to", grain="timestamp")
    assert cond == (
        "(e.ts >= s.dbt_valid_from and (s.dbt_valid_to is null or e.ts < s.dbt_valid_to))"
    )


def test_as_of_bad_grain_fails(render):
    with pytest.raises(
        CompilerError, match="as_of: grain must be 'day' or 'timestamp', not 'hour'"
    ):
        render.call("as_of", "e.ts", "s", grain="hour")


def test_as_of_dispatches_so_an_engine_can_override_it(render):
    render.context_set()
    calls = []
    original = render.adapter.dispatch

    def spy(name, namespace=None):
        calls.append((name, namespace))
        return original(name, namespace)

    render.adapter.dispatch = spy
    render.call("as_of", "e.ts", "s")
    assert calls == [("as_of", "dbt")]


@pytest.mark.parametrize(
    ("custom", "expected"), [(None, "default"), ("marts", "marts"), (" marts ", "marts")]
)
def test_schema_names_are_fixed_on_every_target(render, custom, expected):
    assert render.sql("floe__generate_schema_name", custom, None) == expected


def test_string_literals_escape_quotes_and_backslashes(render):
    assert render.call("floe_string_literal", "it's") == r"'it\'s'"
    assert render.call("floe_string_literal", "a\\") == r"'a\\'"
    assert render.call("floe_string_literal", "a\\' or 1=1 --") == r"'a\\\' or 1=1 --'"
    assert render.call("floe_quote_list", ["D", "it's"]) == r"'D', 'it\'s'"
    assert_parses("select " + render.call("floe_quote_list", ["a\\", "it's", "x"]))


def test_option_reads_meta_then_config_then_default(render):
    assert render.call("floe_option", "write_mode", "copy-on-write") == "copy-on-write"
    render.configure(write_mode="merge-on-read")
    assert render.call("floe_option", "write_mode") == "merge-on-read"
    render.configure(meta={"write_mode": "x"})
    assert render.call("floe_option", "write_mode") == "x"


def test_relation_is_empty_reads_one_row_at_most(render):
    assert render.call("floe_relation_is_empty", "t") is True
    assert render.queries == ["select 1 from t limit 1"]
    render.answer("select 1 from u", [(1,)])
    assert render.call("floe_relation_is_empty", "u") is False
