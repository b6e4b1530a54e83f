"""Generic data tests: the failing rows they select."""

from __future__ import annotations

from tests.unit.macros.jinja_harness import assert_parses


def test_one_current_row_per_key(render):
    sql = render.sql("test_scd2_one_current_row", "marts.dim", "customer_id", "rec_exp_dt")
    assert sql == (
        "select customer_id, count(*) as current_rows from marts.dim"
        " where rec_exp_dt = cast('9999-12-31' as date) group by customer_id having count(*) > 1"
    )
    assert_parses(sql)


def test_valid_intervals_flags_inverted_and_overlapping_versions(render):
    sql = render.sql(
        "test_scd2_valid_intervals", "marts.dim", "customer_id", "rec_eff_dt", "rec_exp_dt"
    )
    assert (
        "lead(rec_eff_dt) over (partition by customer_id order by rec_eff_dt, rec_exp_dt)"
        " as next_vf" in sql
    )
    assert sql.endswith("where vt < vf or (next_vf is not null and next_vf <= vt)")
    assert_parses(sql)


def test_expression_is_true_selects_the_rows_where_it_is_not(render):
    sql = render.sql("test_expression_is_true", "marts.t", "files >= 1")
    assert sql == "select * from marts.t where not (files >= 1)"


def test_floe_checks_run_nothing_outside_build_and_test(render):
    render.context_set(execute=False)
    sql = render.sql("test_floe_checks", "marts.t")
    assert sql == "select 'ok' as floe_check where 1 = 0"
