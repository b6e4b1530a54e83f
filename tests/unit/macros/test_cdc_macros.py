"""The cdc strategy's SQL: latest change per key, op handling, keys, dropped columns."""

from __future__ import annotations

import re

import pytest

from tests.unit.macros.jinja_harness import Column, CompilerError, Relation, assert_parses

TARGET = [Column("id", "int"), Column("season", "int"), Column("name"), Column("retired", "bigint")]
BATCH = [Column("Op"), Column("id", "int"), Column("season", "int"), Column("name")]


def merge_sql(render, unique_key=("id",), cdc=None, target=TARGET, batch=BATCH, **kw) -> str:
    """The MERGE with the staged latest changes (floe_cdc_apply's cached view) inlined."""
    render.configure(unique_key=list(unique_key), meta={"cdc": cdc or {}})
    cfg = render.call("floe_cdc_config")
    payload = render.call("floe_cdc_payload_columns", batch, cfg)
    changes = "(" + render.sql("floe_cdc_latest_changes", "floe_tmp", payload, cfg) + ")"
    return render.sql("floe_cdc_merge_sql", changes, "marts.t", target, payload, cfg, **kw)


def test_dms_ops_delete_upsert_and_null_op(render):
    sql = merge_sql(render)
    assert "when (Op in ('D')) then 'delete'" in sql
    assert "when Op in ('I', 'U') then 'upsert'" in sql
    assert "when Op is null then 'upsert'" in sql  # dms full loads carry no op
    # an op that is neither fails the statement, naming it and the known ops
    assert "else raise_error(concat('marts.t (cdc): unknown op '," in sql
    assert "' (delete: D, upsert: I/U)'))" in sql
    assert "when matched and floe_source.floe_cdc_action = 'delete' then delete" in sql
    assert "when not matched and floe_source.floe_cdc_action = 'upsert' then insert" in sql
    assert_parses(sql)


def test_debezium_deletes_by_op_or_flag_and_refuses_rows_without_op(render):
    batch = [Column("__op"), Column("id", "int"), Column("name"), Column("__deleted")]
    sql = merge_sql(render, cdc={"preset": "debezium"}, batch=batch)
    assert (
        "when (__op in ('d') or coalesce(lower(cast(__deleted as string)) = 'true', false))"
        " then 'delete'" in sql
    )
    assert "when __op in ('c', 'u', 'r') then 'upsert'" in sql
    assert "is null then 'upsert'" not in sql  # null_op: fail
    assert "`__deleted`" not in sql  # `_`-prefixed: a marker, never a target column


def test_latest_change_per_key_and_ties_fail(render):
    sql = merge_sql(render, unique_key=("id", "season"))
    assert (
        "row_number() over (partition by id, season order by last_update_time desc nulls last,"
        " _source_file desc nulls last, _row_in_file desc nulls last) as floe_cdc_rank" in sql
    )
    # a tie of the latest change on every order column is found in the same window
    # order (ties sort together: the next change equals it) and fails loudly
    spec = (
        "over (partition by id, season order by last_update_time desc nulls last,"
        " _source_file desc nulls last, _row_in_file desc nulls last)"
    )
    assert (
        f"coalesce(lead(true) {spec}, false)"
        f" and lead(last_update_time) {spec} <=> last_update_time"
        f" and lead(_source_file) {spec} <=> _source_file"
        f" and lead(_row_in_file) {spec} <=> _row_in_file as floe_cdc_tied" in sql
    )
    assert "count(*) over" not in sql  # no second window order, no second sort
    assert (
        "when floe_cdc_tied then raise_error('marts.t (cdc): two or more changes of one key"
        " tie on every order column (last_update_time, _source_file, _row_in_file);"
        " add a tie-breaker to cdc.order_by')" in sql
    )
    assert "where floe_cdc_rank = 1" in sql


def test_composite_key_joins_on_every_column_and_null_keys_fail(render):
    sql = merge_sql(render, unique_key=("id", "season"))
    assert "on floe_target.id = floe_source.id and floe_target.season = floe_source.season" in sql
    assert "when id is null or season is null then raise_error(" in sql
    # keys are matched, never updated
    assert "floe_target.`id` =" not in sql
    assert "floe_target.`season` =" not in sql
    assert_parses(sql)


def test_a_column_the_batch_no_longer_has_is_written_null(render):
    sql = merge_sql(render)
    assert "floe_target.`retired` = cast(null as bigint)" in sql
    assert "insert (`id`, `season`, `name`, `retired`)" in sql
    assert (
        "values (floe_source.`id`, floe_source.`season`, floe_source.`name`,"
        " cast(null as bigint))" in sql
    )


def test_op_and_provenance_columns_never_reach_the_target(render):
    render.configure(unique_key="id", meta={"cdc": {"exclude_columns": ["Note"]}})
    cfg = render.call("floe_cdc_config")
    batch = [Column("Op"), Column("id"), Column("_source_file"), Column("note"), Column("x")]
    payload = render.call("floe_cdc_payload_columns", batch, cfg)
    assert [c.name for c in payload] == ["id", "x"]


def test_op_values_are_escaped_literals(render):
    sql = merge_sql(render, cdc={"preset": "flag", "upsert_ops": ["I", "it's", "a\\"]})
    assert r"when op in ('I', 'it\'s', 'a\\') then 'upsert'" in sql
    assert r"' (delete: D, upsert: I/it\'s/a\\)'" in sql  # the message quotes them too
    assert_parses(sql)


@pytest.mark.parametrize(
    ("cdc", "message"),
    [
        ({"preset": "oracle"}, "cdc preset 'oracle' is not one of dms, debezium, flag"),
        ({"order": ["ts"]}, "unknown cdc option 'order'; known: op_column"),
    ],
)
def test_bad_cdc_options_fail_naming_the_model(render, cdc, message):
    render.configure(unique_key="id", meta={"cdc": cdc})
    with pytest.raises(CompilerError, match="Model marts.t: " + message.split(";")[0]):
        render.call("floe_cdc_config")


def _graph(source_meta, table_meta, materialized="view"):
    """A mart -> staging view -> raw feed model -> feed source chain, as dbt's graph."""
    source = {
        "source_name": "dms",
        "name": "mlb_data",
        "source_meta": {"floe": source_meta},
        "meta": {},
        "config": {"meta": {"floe": table_meta}},
        # the feed reader (floe.feeds.sources) validates the declaration: typed columns
        "columns": {"policy_id": {"name": "policy_id", "data_type": "string"}},
    }
    nodes = {
        "model.floe.stg": {
            "resource_type": "model",
            "config": {"materialized": materialized, "schema": "staging"},
            "depends_on": {"nodes": ["model.floe.raw"]},
        },
        "model.floe.raw": {
            "resource_type": "model",
            "config": {"materialized": "incremental", "schema": "raw"},
            "depends_on": {"nodes": ["source.floe.dms.mlb_data"]},
        },
    }
    return {"sources": {"source.floe.dms.mlb_data": source}, "nodes": nodes}


MART = {"name": "t", "unrendered_config": {}, "language": "sql"}


def test_split_merge_has_no_insert_and_the_append_takes_keys_the_table_lacks(render):
    sql = merge_sql(render, matched_only=True)
    assert "when matched and floe_source.floe_cdc_action = 'delete' then delete" in sql
    assert "when not matched" not in sql  # inner / left outer join: the batch is broadcast
    assert_parses(sql)
    cfg = render.call("floe_cdc_config")
    payload = render.call("floe_cdc_payload_columns", BATCH, cfg)
    append = render.sql("floe_cdc_append_sql", "floe_changes", "marts.t", TARGET, payload, cfg)
    assert append.startswith("insert into marts.t (`id`, `season`, `name`, `retired`) select")
    # held keys: the target streamed against the batch, never the batch against the target
    assert (
        "left anti join (select floe_target.id from marts.t as floe_target"
        " left semi join floe_changes as floe_batch on floe_target.id = floe_batch.id)"
        " as floe_held on floe_source.id = floe_held.id" in append
    )
    assert append.endswith("where floe_source.floe_cdc_action = 'upsert'")
    assert_parses(append)


def hex_literal(value: str, dtype: str) -> str:
    return f"cast(cast(X'{value.encode().hex()}' as string) as {dtype})"


def test_key_filter_bounds_and_lists_the_batch_keys_as_hex_literals(render):
    render.configure(unique_key=["id", "name"], meta={"cdc": {}})
    cfg = render.call("floe_cdc_config")
    quoted, backslash = "a'b", "z\\"
    stats = {"bounds": {"id": ("3", "70"), "name": (quoted, backslash)}}
    sql = render.call("floe_cdc_key_filter", stats, TARGET, cfg)
    lo, hi = hex_literal(quoted, "string"), hex_literal(backslash, "string")
    assert sql == (
        f"floe_target.id between {hex_literal('3', 'int')} and {hex_literal('70', 'int')} and "
        f"floe_target.name between {lo} and {hi}"
    )
    assert "'a" not in sql and "\\" not in sql  # nothing of the values is SQL text
    render.configure(unique_key="id", meta={"cdc": {}})
    cfg = render.call("floe_cdc_config")
    sql = render.call(
        "floe_cdc_key_filter", {"bounds": {"id": ("3", "9")}}, TARGET, cfg, ["3", "9"]
    )
    assert sql.endswith(f"floe_target.id in ({hex_literal('3', 'int')}, {hex_literal('9', 'int')})")
    merge = merge_sql(render, key_filter=sql)
    on = f"on floe_target.id = floe_source.id and floe_target.id between {hex_literal('3', 'int')}"
    assert on in merge
    assert_parses(merge)


def test_buckets_partition_the_replica_by_its_key(render):
    render.configure(unique_key="id", meta={"cdc": {"buckets": 16}})
    cfg = render.call("floe_cdc_config")
    sql = render.sql("floe_cdc_create_sql", "marts.t", "select 1", ["season"], cfg["buckets"], "id")
    assert "partitioned by (season, bucket(16, id))" in sql


@pytest.mark.parametrize(
    ("cdc", "message"),
    [
        ({"buckets": 0}, "cdc.buckets must be a positive number of buckets, got '0'"),
        ({"buckets": True}, "cdc.buckets must be a positive number of buckets"),
        ({"key_list_max": -1}, "cdc.key_list_max must be a number >= 0"),
        ({"split": "yes"}, "cdc.split must be true or false, got 'yes'"),
    ],
)
def test_bad_pruning_options_fail_naming_the_model(render, cdc, message):
    render.configure(unique_key="id", meta={"cdc": cdc})
    with pytest.raises(CompilerError, match="Model marts.t: " + re.escape(message)):
        render.call("floe_cdc_config")


def test_cdc_key_partitioning_and_preset_default_to_the_feed_declaration():
    from tests.unit.macros.jinja_harness import Renderer

    graph = _graph(
        {"kind": "dms", "op_column": "Op"},
        {"key": ["mlb_id", "season"], "partition_by": ["season"]},
    )
    render = Renderer(graph=graph, model={**MART, "depends_on": {"nodes": ["model.floe.stg"]}})
    cfg = render.call("floe_cdc_config")
    assert cfg["unique_key"] == ["mlb_id", "season"]
    assert cfg["partition_by"] == ["season"]
    assert cfg["preset"] == "dms" and cfg["feed"] == "dms.mlb_data"
    sql = render.sql("floe_cdc_create_sql", "marts.t", "select 1", cfg["partition_by"])
    assert "partitioned by (season)" in sql


def test_the_model_config_wins_over_the_feed_and_flag_feeds_use_the_flag_preset():
    from tests.unit.macros.jinja_harness import Renderer

    graph = _graph({"kind": "flagged_csv"}, {"key": ["policy_id"]})
    render = Renderer(graph=graph, model={**MART, "depends_on": {"nodes": ["model.floe.stg"]}})
    render.configure(unique_key="other_id", partition_by="state_code")
    cfg = render.call("floe_cdc_config")
    assert (cfg["unique_key"], cfg["partition_by"], cfg["preset"]) == (
        ["other_id"],
        ["state_code"],
        "flag",
    )


def test_cdc_without_a_key_of_its_own_or_of_a_feed_fails_naming_the_model():
    from tests.unit.macros.jinja_harness import Renderer

    # a table (not a view) between the mart and the feed: not the feed it replicates
    graph = _graph({"kind": "dms"}, {"key": ["id"]}, materialized="table")
    render = Renderer(graph=graph, model={**MART, "depends_on": {"nodes": ["model.floe.stg"]}})
    with pytest.raises(CompilerError, match=r"Model marts.t: incremental_strategy 'cdc' needs"):
        render.call("floe_cdc_config")


def test_cdc_unapplied_reads_every_row_on_full_builds(render):
    assert render.call("cdc_unapplied") == "true"
    assert render.queries == []


def test_cdc_unapplied_filters_on_the_recorded_watermark(render):
    render.context_set(is_incremental=lambda: True)
    render.answer(
        "show tblproperties marts.t",
        [("format-version", "2"), ("floe.cdc.watermark", "2022-07-02 01:00:00")],
    )
    assert render.call("cdc_unapplied") == "_ingested_at > timestamp '2022-07-02 01:00:00'"
    assert render.call("cdc_unapplied", "_loaded_at").startswith("_loaded_at > timestamp")


def test_cdc_unapplied_filters_on_the_recorded_load_sequence(render):
    render.context_set(is_incremental=lambda: True)
    render.answer(
        "show tblproperties marts.t",
        [("floe.cdc.watermark", "17"), ("floe.cdc.watermark_column", "_load_seq")],
    )
    assert render.call("cdc_unapplied") == "_load_seq > 17"


def test_cdc_unapplied_without_a_watermark_reads_everything(render):
    render.context_set(is_incremental=lambda: True)
    render.answer("show tblproperties marts.t", [("format-version", "2")])
    assert render.call("cdc_unapplied") == "true"


def test_cdc_unapplied_at_parse_time_queries_nothing(render):
    render.context_set(is_incremental=lambda: True, execute=False)
    assert render.call("cdc_unapplied") == "true"
    assert render.queries == []


def test_cdc_build_refuses_a_batch_without_its_key_even_when_empty(render):
    render.configure(unique_key="customer_id", meta={"cdc": {}})
    tmp = Relation(None, "t__dbt_tmp", "view")
    render.adapter.columns[str(tmp)] = [Column("Op"), Column("id"), Column("last_update_time")]
    with pytest.raises(CompilerError, match="column 'customer_id' is not in the model's rows"):
        render.call(
            "floe_cdc_build",
            Relation("marts", "t"),
            Relation("marts", "t"),
            tmp,
            "select 1",
            "ignore",
        )


DMS_BATCH = [
    *BATCH,
    Column("last_update_time", "timestamp"),
    Column("_source_file"),
    Column("_row_in_file", "bigint"),
    Column("_load_seq", "bigint"),
]


def _build_existing(render, batch, stats_row):
    """floe_cdc_build on an existing table, the staged batch's one query answered."""
    render.configure(unique_key="id", meta={"cdc": {}})
    tmp = Relation(None, "t__dbt_tmp", "view")
    render.adapter.columns[str(tmp)] = batch
    render.adapter.columns[str(Relation("marts", "t"))] = TARGET
    render.answer("select count_if(floe_cdc_action = 'upsert')", [stats_row])
    render.call(
        "floe_cdc_build", Relation("marts", "t"), Relation("marts", "t"), tmp, "x", "ignore"
    )
    return [name for name, _ in render.statements]


def test_an_empty_batch_costs_one_query_over_its_staged_rows_and_no_table_statement(render):
    ran = _build_existing(render, DMS_BATCH, (0, 0, None, None, None))
    # the batch is read once, staged: no emptiness probe, no watermark query of its own
    assert [q for q in render.queries if "t__dbt_tmp" in q] == []
    assert len(render.queries) == 1
    assert ran == [
        "create_tmp_relation",
        "stage_changes",
        "cache_changes",
        "drop_changes",
        "drop_changes_view",
        "main",
        "drop_tmp_relation",
    ]
    assert "no new rows" in render.statement("main")


def test_the_watermark_comes_from_the_staged_rows_in_the_key_window(render):
    ran = _build_existing(render, DMS_BATCH, (3, 1, "42", "1", "9"))
    staged = render.statement("stage_changes")
    assert re.search(
        r"max\(_load_seq\) over \(\s*partition by id\s*\) as floe_cdc_watermark", staged
    )
    assert "cast(max(floe_cdc_watermark) as string)" in normalize_query(render.queries[0])
    assert [q for q in render.queries if "t__dbt_tmp" in q] == []  # the batch: read once
    assert "'floe.cdc.watermark' = '42'" in render.statement("record_watermark")
    assert ran.index("cache_changes") < ran.index("main") < ran.index("record_watermark")
    # cached lazily: the one stats query fills the cache, no eager job before it
    assert normalize_query(render.statement("cache_changes")).startswith("cache lazy table ")


def test_a_batch_with_the_tables_columns_skips_schema_evolution(render):
    # the payload has the table's columns and types, cased and spaced differently
    target = [*TARGET, Column("last_update_time", "timestamp"), Column("price", "decimal(9,2)")]
    batch = [
        Column("Op"),
        Column("ID", "int"),
        Column("season", "INT"),
        Column("name"),
        Column("retired", "bigint"),
        Column("last_update_time", "timestamp"),
        Column("price", "decimal(9, 2)"),
        Column("_source_file"),
        Column("_row_in_file", "bigint"),
    ]
    render.configure(unique_key="id", meta={"cdc": {}})
    render.adapter.columns["t__dbt_tmp"] = batch
    render.adapter.columns[str(Relation("marts", "t"))] = target
    render.answer("select count_if(floe_cdc_action = 'upsert')", [(3, 1, None, "1", "9")])
    render.call(
        "floe_cdc_build",
        Relation("marts", "t"),
        Relation("marts", "t"),
        Relation(None, "t__dbt_tmp", "view"),
        "x",
        "append_new_columns",
    )
    ran = [name for name, _ in render.statements]
    assert "create_payload_view" not in ran and "process_schema_changes" not in render.stubs
    assert ran.index("cache_changes") < ran.index("main")
    assert "floe_source.`retired`" in render.statement("main")


def test_a_batch_whose_columns_differ_still_evolves_the_schema(render):
    ran = _build_existing(render, DMS_BATCH, (3, 1, "42", "1", "9"))
    # last_update_time is new and retired is gone: the schema check runs on the payload
    assert ran.index("create_payload_view") < ran.index("drop_payload_view") < ran.index("main")
    assert "process_schema_changes" in render.stubs


def normalize_query(sql: str) -> str:
    return " ".join(sql.split())
