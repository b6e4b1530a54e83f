"""The incremental materialization: config checks, type changes, schema evolution."""

from __future__ import annotations

import pytest

from tests.unit.macros.jinja_harness import Column, CompilerError, Relation, assert_parses


@pytest.mark.parametrize(
    ("strategy", "unique_key", "partition_by", "message"),
    [
        ("insert_overwrite", None, None, "'insert_overwrite' without partition_by would replace"),
    ],
)
def test_invalid_incremental_config_fails_naming_the_model(
    render, strategy, unique_key, partition_by, message
):
    with pytest.raises(CompilerError, match="Model marts.t: incremental_strategy " + message):
        render.call("floe_validate_incremental", strategy, unique_key, partition_by)


def test_unknown_strategy_gets_dbts_message_naming_the_model(render):
    expected = r"Invalid incremental strategy provided: delete\+insert \(model marts.t\)"
    with pytest.raises(CompilerError, match=expected + r"\n +Expected one of: 'append', 'merge'"):
        render.call("floe_validate_incremental", "delete+insert", "id", None)


@pytest.mark.parametrize(
    ("strategy", "unique_key", "partition_by"),
    [
        ("merge", None, None),  # dbt's contract: a MERGE that only inserts
        ("merge", "", None),
        ("merge", ["id"], None),
        ("insert_overwrite", None, ["day"]),
        ("append", None, None),
        ("cdc", "id", None),
    ],
)
def test_valid_incremental_config_passes(render, strategy, unique_key, partition_by):
    render.call("floe_validate_incremental", strategy, unique_key, partition_by)


def test_unique_key_columns_must_be_model_columns(render):
    columns = [Column("State"), Column("county"), Column("city")]
    render.call("floe_validate_unique_key", ["state", "`county`"], columns)
    render.call("floe_validate_unique_key", None, columns)
    render.call("floe_validate_unique_key", [], columns)
    with pytest.raises(
        CompilerError,
        match=r"unique_key column thisisnotacolumn not in the model's columns \(state, county",
    ):
        render.call("floe_validate_unique_key", ["state", "thisisnotacolumn"], columns)
    with pytest.raises(CompilerError, match="unique_key columns a, b not in"):
        render.call("floe_validate_unique_key", ["a", "b"], columns)


@pytest.mark.parametrize(
    ("old", "new", "change"),
    [
        ("int", "int", "same"),
        ("integer", "int", "same"),
        ("int", "bigint", "widen"),
        ("long", "bigint", "same"),
        ("smallint", "int", "refuse"),  # Iceberg promotes only int -> bigint
        ("bigint", "int", "fits"),
        ("bigint", "tinyint", "fits"),
        ("float", "double", "widen"),
        ("double", "float", "fits"),
        ("double", "int", "fits"),
        ("int", "double", "refuse"),
        ("decimal(10,2)", "decimal(12,2)", "widen"),
        ("decimal(12,2)", "decimal(10,2)", "fits"),
        ("decimal(10,2)", "decimal(10,3)", "refuse"),
        ("string", "int", "refuse"),
        ("int", "string", "refuse"),
        ("date", "timestamp", "refuse"),
        ("timestamp", "timestamp_ntz", "fits"),
        ("string", "void", "fits"),
        ("struct<a:int>", "struct<a:int,b:string>", "fits"),
    ],
)
def test_type_change_rule(render, old, new, change):
    assert render.call("floe_type_change", old, new) == change


def evolve_setup(render, target_types, source_types):
    target, source = Relation("marts", "t"), Relation(None, "t__dbt_tmp", "view")
    render.adapter.columns["marts.t"] = [Column(n, t) for n, t in target_types.items()]
    render.adapter.columns["t__dbt_tmp"] = [Column(n, t) for n, t in source_types.items()]
    return target, source


def test_widening_is_applied_before_new_columns_are_added(render):
    target, source = evolve_setup(
        render,
        {"id": "int", "amount": "decimal(10,2)"},
        {"id": "bigint", "amount": "decimal(10,2)"},
    )
    render.call("floe_schema_evolve", "append_new_columns", source, target)
    assert render.statement("widen_id") == "alter table marts.t alter column `id` type bigint"
    (args, _), *_ = render.stubs["process_schema_changes"]
    assert args[0] == "append_new_columns"


@pytest.mark.parametrize("mode", ["append_new_columns", "sync_all_columns"])
def test_a_type_iceberg_cannot_promote_fails_before_anything_changes(render, mode):
    target, source = evolve_setup(
        render, {"id": "int", "code": "int"}, {"id": "int", "code": "string"}
    )
    with pytest.raises(
        CompilerError, match=r"Table marts\.t: column code changes type from int to string"
    ):
        render.call("floe_schema_evolve", mode, source, target)
    assert "process_schema_changes" not in render.stubs
    assert render.statements == []


@pytest.mark.parametrize("mode", ["ignore", "fail"])
def test_ignore_and_fail_are_dbts_rules(render, mode):
    target, source = evolve_setup(render, {"id": "int"}, {"id": "bigint"})
    render.call("floe_schema_evolve", mode, source, target)
    assert render.statements == []
    assert render.stubs["process_schema_changes"][0][0][0] == mode


def test_sync_all_columns_drops_columns_on_iceberg_only_when_asked(render):
    relation = Relation("marts", "t")
    render.call(
        "floe__alter_relation_add_remove_columns",
        relation,
        [Column("field-with-dash", "int")],
        [Column("old"), Column("select")],
    )
    assert (
        render.statement("add_columns") == "alter table marts.t add columns (`field-with-dash` int)"
    )
    assert render.statement("drop_columns") == "alter table marts.t drop columns (`old`, `select`)"


def test_add_remove_columns_of_other_formats_stay_dbt_sparks(render):
    relation = Relation("marts", "t", is_iceberg=False)
    render.call("floe__alter_relation_add_remove_columns", relation, [], [Column("x")])
    assert render.statements == []
    assert "spark__alter_relation_add_remove_columns" in render.stubs


def test_alter_column_type_follows_floes_rule_not_a_rewrite(render):
    render.adapter.columns["marts.t"] = [Column("ID", "int"), Column("code", "bigint")]
    render.call("floe__alter_column_type", Relation("marts", "t"), "id", "bigint")
    assert render.statement("widen_ID") == "alter table marts.t alter column `ID` type bigint"
    render.call("floe__alter_column_type", Relation("marts", "t"), "code", "int")  # fits
    assert [name for name, _ in render.statements] == ["widen_ID"]
    with pytest.raises(CompilerError, match="column code changes type from bigint to string"):
        render.call("floe__alter_column_type", Relation("marts", "t"), "code", "string")


def materialize_incremental(render, strategy, unique_key, tmp_columns, empty=True):
    existing = Relation("marts", "t")
    render.configure(incremental_strategy=strategy, unique_key=unique_key, file_format="iceberg")
    render.context_set(load_relation=lambda relation: existing)
    render.adapter.columns["t__dbt_tmp"] = tmp_columns
    if not empty:
        render.answer("select 1 from t__dbt_tmp limit 1", [(1,)])
    return render.call("materialization_incremental_floe")


def test_a_misspelled_unique_key_fails_even_when_no_rows_arrive(render):
    with pytest.raises(CompilerError, match="unique_key column thisisnotacolumn not in"):
        materialize_incremental(
            render, "merge", ["state", "thisisnotacolumn"], [Column("state"), Column("city")]
        )
    assert render.statement("create_tmp_relation")


def test_an_empty_batch_commits_nothing(render):
    result = materialize_incremental(render, "merge", "state", [Column("state")])
    assert result["relations"][0].identifier == "t"
    assert render.statement("main") == "select 'no new rows' as floe_skipped"


def test_new_rows_are_merged_after_schema_evolution(render):
    render.adapter.columns["marts.t"] = [Column("state"), Column("city")]
    materialize_incremental(
        render, "merge", "state", [Column("state"), Column("city")], empty=False
    )
    assert render.stubs["process_schema_changes"][0][0][0] == "append_new_columns"
    assert render.statement("main").startswith("merge into marts.t as DBT_INTERNAL_DEST")


TARGET_COLUMNS = [Column("id", "int"), Column("select"), Column("dropped", "bigint")]
NEW_ROWS = [Column("ID", "int"), Column("select")]


def incremental_sql(render, strategy, unique_key=None, **config):
    render.configure(**config)
    render.adapter.columns["marts.t"] = TARGET_COLUMNS
    render.adapter.columns["t__dbt_tmp"] = NEW_ROWS
    return render.sql(
        "floe_get_incremental_sql",
        strategy,
        Relation(None, "t__dbt_tmp", "view"),
        Relation("marts", "t"),
        Relation("marts", "t"),
        unique_key,
        None,
    )


def test_append_writes_null_for_a_column_the_rows_no_longer_have(render):
    sql = incremental_sql(render, "append")
    assert sql == (
        "insert into table marts.t select `id`, `select`, cast(null as bigint) as `dropped`"
        " from t__dbt_tmp"
    )
    assert_parses(sql)


def test_insert_overwrite_on_iceberg_replaces_the_partitions_of_the_rows(render):
    sql = incremental_sql(render, "insert_overwrite")
    assert sql.startswith("insert overwrite marts.t select `id`, `select`, cast(null as bigint)")
    assert_parses(sql)


def test_merge_on_a_composite_key_updates_and_inserts_the_shared_columns(render):
    sql = incremental_sql(render, "merge", ["id", "select_key"], sql_header="set x = 1;")
    assert sql.startswith("set x = 1; merge into marts.t as DBT_INTERNAL_DEST")
    assert (
        "on DBT_INTERNAL_SOURCE.id = DBT_INTERNAL_DEST.id and"
        " DBT_INTERNAL_SOURCE.select_key = DBT_INTERNAL_DEST.select_key" in sql
    )
    assert (
        "when matched then update set DBT_INTERNAL_DEST.`id` = DBT_INTERNAL_SOURCE.`id`,"
        " DBT_INTERNAL_DEST.`select` = DBT_INTERNAL_SOURCE.`select`" in sql
    )
    # a column the rows lack is left alone on updates and NULL (Iceberg's default) on inserts
    assert sql.endswith(
        "when not matched then insert (`id`, `select`)"
        " values (DBT_INTERNAL_SOURCE.`id`, DBT_INTERNAL_SOURCE.`select`)"
    )
    assert_parses(sql.removeprefix("set x = 1; "))


@pytest.mark.parametrize("unique_key", [None, "", []])
def test_merge_without_a_unique_key_inserts_every_row(render, unique_key):
    sql = incremental_sql(render, "merge", unique_key)
    assert " on false when matched then update set" in sql


def test_merge_update_columns_narrow_the_update(render):
    sql = incremental_sql(render, "merge", "id", merge_exclude_columns=["ID"])
    assert "update set DBT_INTERNAL_DEST.`select` = DBT_INTERNAL_SOURCE.`select` when" in sql
    render.configure(merge_exclude_columns=None, merge_update_columns=["select"])
    assert "update set DBT_INTERNAL_DEST.`select` =" in incremental_sql(render, "merge", "id")
    render.configure(merge_exclude_columns=["id"])
    with pytest.raises(CompilerError, match="merge_update_columns or merge_exclude_columns"):
        incremental_sql(render, "merge", "id")
