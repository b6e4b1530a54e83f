"""The scd2 materialization's SQL: tagging a load, staging it, the one MERGE, its config."""

from __future__ import annotations

import pytest

from tests.unit.macros.jinja_harness import CompilerError, assert_parses

COLUMNS = {
    "data": ["customer_id", "first_name", "city"],
    "attrs": ["first_name", "city"],
    "tracked": ["first_name", "city"],
    "flags_deletes": False,
}


@pytest.fixture
def cfg(render):
    render.configure(
        unique_key="customer_id",
        scd2_loads="int_customers__loads",
        surrogate_key="customer_sk",
        valid_from="rec_eff_dt",
        valid_to="rec_exp_dt",
    )
    return render.call("floe_scd2_config")


def stage(render, cfg, *, full_extract=True, reapply=False, columns=COLUMNS) -> str:
    render.answer(
        "select _scd2_row, _scd2_op, count(*)",
        [("insert", "I", 2), ("match", "U", 1), ("insert", "U", 1), ("match", "N", 3)],
    )
    staged = render.call(
        "floe_scd2_stage", "marts.dim", "src", columns, cfg, "2022-07-03", full_extract, reapply
    )
    assert staged["counts"] == {"inserted": 2, "changed": 1, "deleted": 0, "rolled_back": 3}
    assert staged["total"] == 7
    assert_parses(render.statement("stage", raw=True))
    assert render.statement("cache_stage") == f"cache table {staged['view']}"
    return render.statement("stage")


def test_full_extract_tags_every_key_against_the_current_rows(render, cfg):
    sql = stage(render, cfg)
    # current rows of the table before the load
    assert "from marts.dim as t where t.rec_exp_dt = date'9999-12-31')" in sql
    # a full extract: keys missing from the load are deletes
    assert "from src as s full outer join cur as c on s.customer_id = c.customer_id" in sql
    assert "when s.customer_id is null then 'D'" in sql
    assert "when c.customer_id is null then 'I'" in sql
    # changes compare a hash that cannot collide by concatenation
    assert (
        "when sha2(to_json(named_struct('first_name', s.first_name, 'city', s.city)), 256)"
        " <> sha2(to_json(named_struct('first_name', c.first_name, 'city', c.city)), 256)"
        " then 'U'" in sql
    )
    # new versions numbered after the table's largest surrogate key, in key order
    assert "select coalesce(max(customer_sk), 0) as max_sk from marts.dim)" in sql
    assert "m.max_sk + row_number() over (order by t.customer_id) as _scd2_sk" in sql
    assert "where t._scd2_op in ('I', 'U')" in sql
    assert "footprint" not in sql


def test_change_load_only_touches_the_keys_it_carries(render, cfg):
    sql = stage(render, cfg, full_extract=False)
    assert "from src as s left join cur as c" in sql
    assert "when s.customer_id is null then 'N'" in sql


def test_reapplying_a_load_rolls_back_its_earlier_application(render, cfg):
    sql = stage(render, cfg, reapply=True)
    # what was current before the load's first application
    assert (
        "where t.rec_exp_dt = date'9999-12-31' and t.rec_eff_dt < date'2022-07-03'"
        " or t.rec_exp_dt = date_sub(date'2022-07-03', 1)" in sql
    )
    assert (
        "footprint as (select distinct customer_id from marts.dim where rec_eff_dt ="
        " date'2022-07-03' or rec_exp_dt = date_sub(date'2022-07-03', 1))" in sql
    )
    # keys the new content no longer mentions are rolled back too
    assert "from footprint as f left anti join tagged as t on f.customer_id = t.customer_id" in sql
    # surrogate keys continue from before the earlier application
    assert "from marts.dim where rec_eff_dt < date'2022-07-03')" in sql


def test_delete_flag_column_marks_deletes(render, cfg):
    columns = {**COLUMNS, "flags_deletes": True}
    sql = stage(render, cfg, columns=columns)
    assert "coalesce(s._scd2_deleted, false) as _scd2_del" in sql
    assert "when s._scd2_del then 'D'" in sql


def test_merge_expires_replaces_and_inserts_in_one_statement(render, cfg):
    sql = render.sql("floe_scd2_merge_sql", "marts.dim", "staged", COLUMNS, cfg, "2022-07-03")
    assert_parses(sql)
    assert sql.startswith("merge into marts.dim as t using staged as s on s._scd2_row = 'match'")
    assert "when matched and t.rec_eff_dt = date'2022-07-03' then delete" in sql
    assert (
        "when matched and s._scd2_op in ('U', 'D') then update set"
        " t.rec_exp_dt = date_sub(date'2022-07-03', 1)" in sql
    )
    assert (
        "when matched and t.rec_exp_dt <> date'9999-12-31' then update set"
        " t.rec_exp_dt = date'9999-12-31'" in sql
    )
    assert (
        "when not matched and s._scd2_row = 'insert' then insert (customer_sk, customer_id,"
        " first_name, city, rec_eff_dt, rec_exp_dt) values (s._scd2_sk, s.customer_id,"
        " s.first_name, s.city, date'2022-07-03', date'9999-12-31')" in sql
    )


def test_first_load_is_one_create_table_as(render, cfg):
    render.configure(meta={"write_mode": "merge-on-read"})
    sql = render.sql("floe_scd2_create_sql", "marts.dim", "src", COLUMNS, cfg, "2022-07-01")
    assert_parses(sql)
    assert "'write.merge.mode' = 'merge-on-read'" in sql
    assert (
        "cast(row_number() over (order by customer_id) as bigint) as customer_sk" in sql
        and "date'2022-07-01' as rec_eff_dt, date'9999-12-31' as rec_exp_dt from src" in sql
    )
    empty = render.sql("floe_scd2_create_sql", "marts.dim", "src", COLUMNS, cfg)
    assert empty.endswith("where false")


def test_loads_are_applied_in_date_order_and_an_older_load_is_refused(render, cfg):
    loads = [["2022-07-01", "full", "a"], ["2022-07-02", "changes", "b"], ["2022-07-03", "x", "c"]]
    applied = {"2022-07-01": "a", "2022-07-02": "b"}
    assert render.call("floe_scd2_pending", loads, applied, cfg) == [loads[2]]
    # a late file changes the fingerprint of the last applied load: it is pending again
    late = {"2022-07-01": "a", "2022-07-02": "b-old"}
    assert render.call("floe_scd2_pending", loads, late, cfg) == loads[1:]
    # ...but a change to a load older than the last applied one cannot be slotted in
    with pytest.raises(CompilerError, match="load 2022-07-01 is older than the last applied"):
        render.call("floe_scd2_pending", loads, {"2022-07-01": "z", "2022-07-02": "b"}, cfg)


def test_run_date_var_stops_at_that_date(render):
    render.context_set(
        var=lambda name, default=None: "2022-07-02" if name == "run_date" else default
    )
    render.configure(unique_key="id", scd2_loads="loads")
    cfg = render.call("floe_scd2_config")
    loads = [["2022-07-01", "full", "a"], ["2022-07-03", "changes", "c"]]
    assert render.call("floe_scd2_pending", loads, {}, cfg) == [loads[0]]


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"delete_detection": "never"}, "delete_detection 'never' is not one of auto"),
        ({"sentinel": "9999-12-31' or true --"}, "scd2 sentinel '9999-12-31' or true --' is not"),
        ({"initial_eff_date": "July 1st"}, "scd2 initial_eff_date 'July 1st' is not a date"),
    ],
)
def test_bad_config_fails_naming_the_model_and_option(render, config, message):
    render.configure(unique_key="id", scd2_loads="loads", **config)
    with pytest.raises(CompilerError, match="Model marts.t: " + message):
        render.call("floe_scd2_config")


def test_key_and_tracked_columns_must_be_model_columns(render, cfg):
    render.answer("select * from src limit 0", [], ["customer_id", "first_name", "_scd2_deleted"])
    columns = render.call("floe_scd2_columns", "src", cfg)
    assert columns == {
        "data": ["customer_id", "first_name"],
        "attrs": ["first_name"],
        "tracked": ["first_name"],
        "flags_deletes": True,
    }
    render.configure(tracked_columns=["email"])
    with pytest.raises(CompilerError, match="tracked column 'email' is not a non-key column"):
        render.call("floe_scd2_columns", "src", render.call("floe_scd2_config"))
    render.configure(unique_key="id", tracked_columns=None)
    with pytest.raises(CompilerError, match="unique_key column 'id' is not a column"):
        render.call("floe_scd2_columns", "src", render.call("floe_scd2_config"))


def test_load_date_is_a_marker_the_materialization_replaces(render):
    assert render.sql("floe_scd2_load_date") == "cast('__FLOE_SCD2_LOAD_DATE__' as date)"
