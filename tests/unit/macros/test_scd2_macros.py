"""The scd2 materialization's SQL: the plan of pending loads, their versions, the one MERGE."""

from __future__ import annotations

import pytest

from tests.unit.macros.jinja_harness import (
    Column,
    CompilerError,
    Renderer,
    assert_parses,
    normalize,
)

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


LOADS = [["2022-07-01", "full", "a"], ["2022-07-02", "changes", "b"], ["2022-07-03", "full", "c"]]


def plan(render, cfg, loads=LOADS):
    return render.call("floe_scd2_plan", loads, loads[0][0], cfg)


def versions(render, cfg, target="marts.dim", loads=LOADS, reapply=False, columns=COLUMNS):
    sql = render.call(
        "floe_scd2_versions_sql", target, "src", columns, cfg, plan(render, cfg, loads), reapply
    )
    assert_parses(str(sql))
    return render.sql(
        "floe_scd2_versions_sql", target, "src", columns, cfg, plan(render, cfg, loads), reapply
    )


def test_plan_gives_each_load_its_position_effective_date_and_delete_mode(render, cfg):
    render.configure(initial_eff_date="2022-06-30")
    cfg = render.call("floe_scd2_config")
    assert plan(render, cfg) == [
        {
            "idx": 1,
            "date": "2022-07-01",
            "kind": "full",
            "fingerprint": "a",
            "eff": "2022-06-30",
            "full": True,
        },
        {
            "idx": 2,
            "date": "2022-07-02",
            "kind": "changes",
            "fingerprint": "b",
            "eff": "2022-07-02",
            "full": False,
        },
        {
            "idx": 3,
            "date": "2022-07-03",
            "kind": "full",
            "fingerprint": "c",
            "eff": "2022-07-03",
            "full": True,
        },
    ]
    # a later catch-up: only the first LISTED load opens on initial_eff_date
    later = render.call("floe_scd2_plan", LOADS[1:], "2022-07-01", cfg)
    assert [p["eff"] for p in later] == ["2022-07-02", "2022-07-03"]
    render.configure(delete_detection="status")
    assert [p["full"] for p in plan(render, render.call("floe_scd2_config"))] == [False] * 3
    render.configure(delete_detection="absence")
    assert [p["full"] for p in plan(render, render.call("floe_scd2_config"))] == [True] * 3


def test_a_load_date_that_is_not_a_date_fails_before_reaching_sql(render, cfg):
    with pytest.raises(CompilerError, match="load_date '2022-07-01' or true' listed by"):
        plan(render, cfg, [["2022-07-01' or true", "full", "a"]])


def test_the_model_is_rendered_once_per_load_and_stacked(render, cfg):
    code = "select * from x where load_date = cast('__FLOE_SCD2_LOAD_DATE__' as date) -- tail"
    sql = str(render.call("floe_scd2_source_sql", code, plan(render, cfg)))
    assert "__FLOE_SCD2_LOAD_DATE__" not in sql
    assert sql.count("union all") == 2
    for i, day in enumerate(["2022-07-01", "2022-07-02", "2022-07-03"], 1):
        assert (
            f"select _scd2_one_load.*, {i} as _scd2_load from (select * from x where load_date ="
            f" cast('{day}' as date) -- tail) as _scd2_one_load" in normalize(sql)
        )
    # the model's trailing comment ends before the closing parenthesis
    assert "-- tail\n" in sql
    assert_parses(sql.replace("-- tail", ""))


def test_a_multi_load_model_is_rendered_once_over_every_load(render, cfg):
    loads = render.sql("floe_scd2_loads")
    assert_parses(f"select * from {loads} as p")  # compiled alone: one load, valid SQL
    code = f"select p._scd2_load, x.* from {loads} as p join x on x.d = p.load_date -- tail"
    sql = str(render.call("floe_scd2_source_sql", code, plan(render, cfg)))
    assert "__FLOE_SCD2_LOAD_DATE__" not in sql
    assert "union all" not in sql
    assert (
        "from (select * from values (1, date'2022-07-01'), (2, date'2022-07-02'), "
        "(3, date'2022-07-03') as __floe_scd2_loads(_scd2_load, load_date)) as p"
    ) in normalize(sql)
    assert "-- tail\n" in sql
    assert_parses(sql.replace("-- tail", ""))


def test_a_model_cannot_mix_the_two_forms(render, cfg):
    loads = render.sql("floe_scd2_loads")
    code = f"select * from {loads} as p where p.load_date <= {render.sql('floe_scd2_load_date')}"
    with pytest.raises(CompilerError, match="a model renders every load at once or one load"):
        render.call("floe_scd2_source_sql", code, plan(render, cfg))


def test_versions_tag_each_event_against_the_state_before_it(render, cfg):
    sql = versions(render, cfg)
    # the current rows before the loads, their tracked columns; a full extract reads every one
    assert (
        "named_struct('first_name', t.first_name, 'city', t.city) as"
        " _scd2_tracked from marts.dim as t where t.rec_exp_dt = date'9999-12-31')" in sql
    )
    assert "left semi join" not in sql and "footprint" not in sql
    # each key's events in load order, load 0 being its current row
    assert "0 as _scd2_load, true as _scd2_present, _scd2_tracked from base union all" in sql
    assert "window w as (partition by customer_id order by _scd2_load)" in sql
    # I/U/D/N against the previous event, the tracked columns compared as one struct
    assert "named_struct('first_name', s.first_name, 'city', s.city) as _scd2_tracked" in sql
    assert "then case when s._scd2_present then 'I' else 'N' end" in sql
    assert "when not s._scd2_present then 'D'" in sql
    assert "when s._scd2_tracked <> s._scd2_prev_tracked then 'U'" in sql
    # full extracts are loads 1 and 3: the first one after loads 0, 1, 2, 3
    assert "element_at(array(1, 3, 3, 4), s._scd2_prev_load + 1) >= s._scd2_load" in sql
    assert "element_at(array(1, 3, 3, 4), s._scd2_load + 1) < s._scd2_next_load" in sql
    # a version ends the day before the next change or delete of its key
    assert (
        "date_sub(element_at(array(date'2022-07-01', date'2022-07-02', date'2022-07-03'),"
        " v._scd2_end_load), 1)" in sql
    )
    # one pass over `ended`: current rows to close, and new versions numbered after the
    # largest key, by load then key
    assert "case when e._scd2_load = 0 then 'match' else 'insert' end as _scd2_row" in sql
    assert "select coalesce(max(customer_sk), 0) as max_sk from marts.dim)" in sql
    assert (
        "case when e._scd2_load > 0 then cast(m.max_sk + row_number() over (partition by"
        " e._scd2_load = 0 order by e._scd2_load, e.customer_id) as bigint) end as _scd2_sk" in sql
    )
    assert sql.endswith(
        "from ended as e cross join max_sk as m where e._scd2_op in ('I', 'U')"
        " or e._scd2_load = 0 and e._scd2_end_load is not null"
    )
    assert sql.count("from ended") == 1


def test_two_rows_for_a_key_in_one_load_fail_naming_key_and_load(render, cfg):
    sql = versions(render, cfg)
    assert (
        "when s._scd2_load = s._scd2_prev_load then raise_error(concat('marts.t: the model"
        " returned two rows for key (', coalesce(cast(s.customer_id as string), 'NULL'),"
        " ') in load ', element_at(array('2022-07-01', '2022-07-02', '2022-07-03'),"
        " s._scd2_load)" in sql
    )


def test_change_loads_read_only_their_keys_from_the_table(render, cfg):
    changes = [["2022-07-02", "changes", "b"], ["2022-07-03", "changes", "c"]]
    sql = versions(render, cfg, loads=changes)
    assert (
        "from marts.dim as t left semi join (select customer_id from src) as k"
        " on t.customer_id = k.customer_id where t.rec_exp_dt = date'9999-12-31'" in sql
    )
    # no full extract: nothing is deleted by absence
    assert "element_at(array(3, 3, 3), s._scd2_prev_load + 1)" in sql


def test_reapplying_a_load_rolls_back_its_earlier_application(render, cfg):
    sql = versions(render, cfg, loads=LOADS[2:], reapply=True)
    # what was current before the load's first application
    assert (
        "where t.rec_exp_dt = date'9999-12-31' and t.rec_eff_dt < date'2022-07-03'"
        " or t.rec_exp_dt = date_sub(date'2022-07-03', 1)" in sql
    )
    assert (
        "footprint as (select distinct customer_id from marts.dim where rec_eff_dt ="
        " date'2022-07-03' or rec_exp_dt = date_sub(date'2022-07-03', 1))" in sql
    )
    # every row from before is matched (re-opened where the earlier application closed it)
    assert "where e._scd2_op in ('I', 'U') or e._scd2_load = 0 union all" in sql
    # keys the earlier application inserted and nothing mentions now are rolled back too
    assert "from footprint as f left anti join base as b on f.customer_id = b.customer_id" in sql
    # surrogate keys continue from before the earlier application
    assert "from marts.dim where rec_eff_dt < date'2022-07-03')" in sql


def test_delete_flag_column_marks_deletes(render, cfg):
    assert "true as _scd2_present" in versions(render, cfg)
    flagged = versions(render, cfg, columns={**COLUMNS, "flags_deletes": True})
    assert "not coalesce(s._scd2_deleted, false) as _scd2_present" in flagged


def test_a_rebuild_numbers_every_version_from_one(render, cfg):
    sql = versions(render, cfg, target=None)
    assert "marts.dim" not in sql and "'match'" not in sql
    assert "cast(row_number() over (order by e._scd2_load, e.customer_id) as bigint)" in sql
    render.configure(meta={"write_mode": "merge-on-read"})
    create = render.sql("floe_scd2_create_sql", "marts.dim", "src", COLUMNS, cfg, "versions")
    assert_parses(create)
    assert "'write.merge.mode' = 'merge-on-read'" in create
    assert create.endswith(
        "as select s._scd2_sk as customer_sk, s.customer_id, s.first_name, s.city,"
        " s._scd2_valid_from as rec_eff_dt, s._scd2_valid_to as rec_exp_dt"
        " from versions as s where s._scd2_row = 'insert'"
    )
    empty = render.sql("floe_scd2_create_sql", "marts.dim", "src", COLUMNS, cfg)
    assert empty.endswith("from src where false")


def test_merge_closes_and_inserts_every_load_in_one_statement(render, cfg):
    sql = render.sql("floe_scd2_merge_sql", "marts.dim", "v", COLUMNS, cfg, plan(render, cfg))
    assert_parses(sql)
    # Merge-on-read, the statement asks for Spark's runtime filter (its source is the
    # versions under a filter every row passes, which the filter is derived from);
    # copy-on-write, not (docs/decisions/0020-runtime-filtered-merges.md).
    args = ("floe_scd2_merge_sql", "marts.dim", "v", COLUMNS, cfg, plan(render, cfg))
    assert "floe:runtime_filter" not in str(render.call(*args))
    render.configure(tblproperties={"write.merge.mode": "merge-on-read"})
    assert "/* floe:runtime_filter */" in str(render.call(*args))
    assert sql.startswith(
        "merge into marts.dim as t"
        " using (select * from v where _scd2_row in ('match', 'insert')) as s"
        " on s._scd2_row = 'match'"
        " and t.customer_id = s.customer_id and t.rec_exp_dt = date'9999-12-31'"
        " when matched then update set t.rec_exp_dt = s._scd2_valid_to"
    )
    assert "delete" not in sql
    assert sql.endswith(
        "when not matched and s._scd2_row = 'insert' then insert (customer_sk, customer_id,"
        " first_name, city, rec_eff_dt, rec_exp_dt) values (s._scd2_sk, s.customer_id,"
        " s.first_name, s.city, s._scd2_valid_from, s._scd2_valid_to)"
    )


def test_merge_reapplying_a_load_replaces_its_rows_and_reopens_what_it_closed(render, cfg):
    sql = render.sql(
        "floe_scd2_merge_sql", "marts.dim", "v", COLUMNS, cfg, plan(render, cfg, LOADS[2:]), True
    )
    assert_parses(sql)
    assert (
        "and (t.rec_eff_dt = date'2022-07-03' or t.rec_exp_dt = date'9999-12-31'"
        " and t.rec_eff_dt < date'2022-07-03' or t.rec_exp_dt = date_sub(date'2022-07-03', 1))"
        " when matched and t.rec_eff_dt = date'2022-07-03' then delete"
        " when matched and t.rec_exp_dt <> s._scd2_valid_to then update set"
        " t.rec_exp_dt = s._scd2_valid_to" in sql
    )


def test_counts_and_key_bounds_of_the_staged_versions_are_one_query(render, cfg):
    render.answer("select count(*), count_if(_scd2_op = 'I')", [(9, 2, 3, 4, "3", "70")])
    counts = render.call("floe_scd2_counts", "v", cfg)
    assert counts["rows"] == 9
    assert counts["counts"] == {"new": 2, "changed": 3, "closed_or_reopened": 4}
    assert counts["matched"] == 4  # the rows the MERGE matches: its key filter's input
    assert counts["bounds"] == {"customer_id": ("3", "70")}
    sql = normalize(render.queries[-1])
    assert "min(case when _scd2_row = 'match' then customer_id end)" in sql
    assert len(render.queries) == 1
    render.query_results.clear()
    render.answer("select count(*), count_if(_scd2_op = 'I')", [(0, 0, 0, 0, None, None)])
    assert render.call("floe_scd2_counts", "empty", cfg)["rows"] == 0


def test_the_merge_reads_only_the_keys_whose_current_row_changes(render, cfg):
    none_matched = {"matched": 0, "bounds": {"customer_id": (None, None)}}
    assert render.call("floe_scd2_key_filter", "v", cfg, none_matched) == ""
    render.answer("select distinct cast(customer_id", [("3",), ("70",)], ["k"])
    render.adapter.columns["v"] = [Column("customer_id", "bigint")]
    counts = {"matched": 2, "bounds": {"customer_id": ("3", "70")}}
    key_filter = render.call("floe_scd2_key_filter", "v", cfg, counts)
    lit = {v: f"cast(cast(X'{v.encode().hex()}' as string) as bigint)" for v in ("3", "70")}
    assert key_filter == (
        f"t.customer_id between {lit['3']} and {lit['70']}"
        f" and t.customer_id in ({lit['3']}, {lit['70']})"
    )


def test_state_is_one_query_of_loads_applications_and_snapshots(render, cfg):
    render.answer(
        "with loads as",
        [
            ("load", "2022-07-02", "changes", "b"),
            ("applied", "2022-07-01", None, "a"),
            ("load", "2022-07-01", "full", "a"),
            ("snapshots", "11", "12", None),
        ],
    )
    state = render.call("floe_scd2_state", cfg, "audit.floe_scd2_ledger", "marts.dim")
    assert state == {
        "loads": [["2022-07-01", "full", "a"], ["2022-07-02", "changes", "b"]],
        "applied": {"2022-07-01": "a"},
        "snapshots": {"ledger": "11", "table": "12"},
    }
    sql = normalize(render.queries[-1])
    assert_parses(render.queries[-1])
    assert "from intermediate.int_customers__loads" in sql
    assert "where model = 'marts.t'" in sql
    assert "from marts.dim.refs where name = 'main'" in sql
    render.call("floe_scd2_state", cfg, "audit.floe_scd2_ledger", None)
    assert "refs" not in normalize(render.queries[-1])


def test_the_ledger_records_every_applied_load_in_one_insert(render, cfg):
    render.call("floe_scd2_record", "audit.floe_scd2_ledger", plan(render, cfg), "marts.dim")
    sql = render.statement("record_loads")
    assert_parses(sql)
    assert (
        "insert into audit.floe_scd2_ledger select 'marts.t', l.load_date, l.fingerprint,"
        " (select snapshot_id from marts.dim.refs where name = 'main'), current_timestamp()"
        " from values ('2022-07-01', 'a'), ('2022-07-02', 'b'), ('2022-07-03', 'c')"
        " as l(load_date, fingerprint)" in sql
    )


def test_an_interrupted_build_is_recovered_from_the_table(render, cfg):
    # 07-02 was merged but its ledger rows never written; 07-03 was not merged
    render.answer("select distinct cast(d as string)", [("2022-07-02",)])
    pending = [["2022-07-02", "changes", "b"], ["2022-07-03", "full", "c"]]
    applied = {"2022-07-01": "a"}
    left = render.call(
        "floe_scd2_recover",
        "marts.dim",
        "audit.floe_scd2_ledger",
        pending,
        applied,
        "2022-07-01",
        cfg,
    )
    assert left == pending[1:]
    assert "('2022-07-02', 'b')" in render.statement("record_loads")
    assert "rec_eff_dt in (date'2022-07-02', date'2022-07-03')" in render.queries[-1]
    # no trace of any pending load: nothing recorded, everything still to apply
    fresh = Renderer()
    fresh.configure(**render.config.values)
    left = fresh.call(
        "floe_scd2_recover",
        "marts.dim",
        "audit.floe_scd2_ledger",
        pending,
        applied,
        "2022-07-01",
        fresh.call("floe_scd2_config"),
    )
    assert left == pending
    assert not [s for s, _ in fresh.statements if s == "record_loads"]


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
        "tags_loads": False,
    }
    render.configure(tracked_columns=["email"])
    with pytest.raises(CompilerError, match="tracked column 'email' is not a non-key column"):
        render.call("floe_scd2_columns", "src", render.call("floe_scd2_config"))
    render.configure(unique_key="id", tracked_columns=None)
    with pytest.raises(CompilerError, match="unique_key column 'id' is not a column"):
        render.call("floe_scd2_columns", "src", render.call("floe_scd2_config"))


def test_load_date_is_a_marker_the_materialization_replaces(render):
    assert render.sql("floe_scd2_load_date") == "cast('__FLOE_SCD2_LOAD_DATE__' as date)"
