{#
    floe's `seed` materialization: the CSV in one Iceberg commit.

    floe reads the CSV with dbt's column types (the same inference and
    `column_types` as on every adapter, decided per column from its distinct
    values instead of agate's per-cell pass: floe.materialize.seeds), turns the
    rows into one DataFrame in the dbt process's SparkSession
    (adapter.floe_seed_view: cast to the column types; a value its type cannot
    hold fails the write naming column and value) and writes it with one
    `create or replace table ... as select`: a first seed, a re-seed of a
    changed CSV and --full-refresh alike are one atomic commit that keeps the
    table's history, instead of dbt-spark's drop/truncate and rendered
    `insert ... values` batches (docs/decisions/0025-seeds-and-snapshots.md).

    A seed whose CSV, column types and config are those of its last load
    (table property `floe.seed`) is not rewritten: re-running `dbt seed`
    commits nothing. Seeds are Iceberg tables without any file_format.

    A seed's name may hold dots (`seed.with.dots.csv`): floe's relations backquote a
    name Spark cannot read unquoted. dbt's config checks hold: `delimiter` is one
    character, and with `quote_columns: false` every column name is a plain identifier
    (dbt would paste it into the DDL; floe refuses it with the same syntax error).
#}
{% materialization seed, adapter='floe' %}
    {%- set full_refresh_mode = should_full_refresh() -%}
    {%- set old_relation = adapter.get_relation(
        database=database, schema=schema, identifier=model['alias']) -%}
    {%- set target_relation = adapter.floe_seed_relation(this.incorporate(type='table')) -%}
    {%- set grant_config = config.get('grants') -%}
    {%- set file_format = config.get('file_format') -%}
    {%- if file_format not in (none, 'iceberg') -%}
        {{ exceptions.raise_compiler_error(
            "Seed " ~ this ~ ": file_format '" ~ file_format ~ "': floe's seeds are "
            ~ "Iceberg tables; remove file_format or set it to iceberg") }}
    {%- endif -%}
    {%- if old_relation is not none and old_relation.is_view -%}
        {{ exceptions.raise_compiler_error(
            "Cannot seed to '" ~ old_relation.render() ~ "', it is a view") }}
    {%- endif -%}

    {%- set csv_path = model['root_path'] ~ '/' ~ model['original_file_path'] -%}
    {%- set columns = adapter.floe_seed_read(this | string, csv_path,
        config.get('column_types'), config.get('delimiter'), config.get('quote_columns')) -%}
    {%- do store_result('agate_table', response='OK',
        agate_table=adapter.floe_seed_show_table(columns)) -%}
    {%- set fingerprint = local_md5(model['checksum']['checksum']
        ~ tojson(columns.types) ~ tojson(model['config'])) -%}
    {%- set rows_affected = columns.rows -%}

    {{ run_hooks(pre_hooks, inside_transaction=False) }}
    {{ run_hooks(pre_hooks, inside_transaction=True) }}

    {%- if not full_refresh_mode and old_relation is not none
        and floe_table_property(target_relation, 'floe.seed') == fingerprint -%}
        {{ log(this ~ ': CSV and config unchanged since the last seed, nothing committed',
            info=False) }}
        {%- set code, sql = 'INSERT', '-- unchanged: nothing written' -%}
        {%- set rows_affected = 0 -%}
    {%- else -%}
        {%- set view = adapter.floe_seed_view(target_relation | string, columns) -%}
        {%- set sql = floe_seed_table_as(target_relation, view, fingerprint) -%}
        {%- call statement('load_seed') -%}{{ sql }}{%- endcall -%}
        {%- call statement('drop_seed_view') -%}drop view if exists {{ view }}{%- endcall -%}
        {%- set code = 'CREATE' if full_refresh_mode or old_relation is none else 'INSERT' -%}
    {%- endif -%}

    {% call noop_statement('main', code ~ ' ' ~ rows_affected, code, rows_affected) %}
        {{ sql }};
    {% endcall %}

    {% set should_revoke = should_revoke(old_relation, full_refresh_mode) %}
    {% do apply_grants(target_relation, grant_config, should_revoke=should_revoke) %}
    {% do persist_docs(target_relation, model) %}
    {{ run_hooks(post_hooks, inside_transaction=True) }}
    {{ adapter.commit() }}
    {{ run_hooks(post_hooks, inside_transaction=False) }}
    {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}


{# The one statement that writes a seed: create or replace from its rows' view, with
   the fingerprint of its load among the table's properties (one commit: a crash
   cannot leave the rows without it). #}
{% macro floe_seed_table_as(relation, view, fingerprint) %}
    {%- set properties = floe_table_properties() -%}
    {%- do properties.update({'floe.seed': fingerprint}) -%}
    create or replace table {{ relation }}
    using iceberg
    tblproperties (
        {%- for key, value in properties.items() %}
        {{ floe_string_literal(key) }} = {{ floe_string_literal(value) }}{{ ',' if not loop.last }}
        {%- endfor %}
    )
    {{ partition_cols(label="partitioned by") }}
    {{ location_clause() }}
    {{ comment_clause() }}
    as select * from {{ view }}
{% endmacro %}
