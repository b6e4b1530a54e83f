{#
    floe's incremental materialization (SQL and Python models).

    Same contract as dbt-spark's, plus:
    - new rows are a temporary view (SQL and Python alike; Python models run
      in this session), never a scratch table;
    - when the new rows are empty nothing is written, so a re-run with no new
      input commits no Iceberg snapshot;
    - `insert_overwrite` without `partition_by` is refused: on Iceberg it would
      replace the whole table;
    - schema changes default to `append_new_columns`: columns are added, never
      dropped.
#}
{% materialization incremental, adapter='floe', supported_languages=['sql', 'python'] -%}
    {%- set strategy = config.get('incremental_strategy') or 'append' -%}
    {%- set unique_key = config.get('unique_key', none) -%}
    {%- set partition_by = config.get('partition_by', none) -%}
    {%- set language = model['language'] -%}
    {%- set grant_config = config.get('grants') -%}
    {%- set on_schema_change = incremental_validate_on_schema_change(
        config.get('on_schema_change'), default='append_new_columns') -%}
    {%- set incremental_predicates = config.get('predicates', none)
        or config.get('incremental_predicates', none) -%}
    {{ floe_validate_incremental(strategy, unique_key, partition_by) }}

    {%- set target_relation = this.incorporate(type='table') -%}
    {%- set existing_relation = load_relation(this) -%}
    {%- set tmp_relation = make_temp_relation(this).include(database=false, schema=false) -%}

    {{ run_hooks(pre_hooks) }}

    {%- if existing_relation is none or existing_relation.is_view or should_full_refresh() -%}
        {%- if existing_relation is not none -%}
            {% do adapter.drop_relation(existing_relation) %}
        {%- endif -%}
        {%- call statement('main', language=language) -%}
            {{ create_table_as(False, target_relation, compiled_code, language) }}
        {%- endcall -%}
    {%- else -%}
        {%- call statement('create_tmp_relation', language=language) -%}
            {{ create_table_as(True, tmp_relation, compiled_code, language) }}
        {%- endcall -%}
        {%- if floe_relation_is_empty(tmp_relation) -%}
            {{ log(this ~ ': no new rows, nothing committed', info=False) }}
            {%- call statement('main') -%}
                select 'no new rows' as floe_skipped
            {%- endcall -%}
        {%- else -%}
            {%- do process_schema_changes(on_schema_change, tmp_relation, existing_relation) -%}
            {%- call statement('main') -%}
                {{ dbt_spark_get_incremental_sql(
                    strategy, tmp_relation, target_relation, existing_relation,
                    unique_key, incremental_predicates) }}
            {%- endcall -%}
        {%- endif -%}
        {%- call statement('drop_tmp_relation') -%}
            drop view if exists {{ tmp_relation }}
        {%- endcall -%}
    {%- endif -%}

    {% set should_revoke = should_revoke(existing_relation, full_refresh_mode) %}
    {% do apply_grants(target_relation, grant_config, should_revoke) %}
    {% do persist_docs(target_relation, model) %}
    {{ run_hooks(post_hooks) }}
    {{ return({'relations': [target_relation]}) }}
{%- endmaterialization %}


{% macro floe_validate_incremental(strategy, unique_key, partition_by) %}
    {%- set allowed = ['append', 'merge', 'insert_overwrite'] -%}
    {%- if strategy not in allowed -%}
        {{ exceptions.raise_compiler_error(
            "Model " ~ this ~ ": incremental_strategy '" ~ strategy
            ~ "' is not one of " ~ allowed | join(', ')) }}
    {%- endif -%}
    {%- if strategy == 'insert_overwrite' and not partition_by -%}
        {{ exceptions.raise_compiler_error(
            "Model " ~ this ~ ": incremental_strategy 'insert_overwrite' without "
            ~ "partition_by would replace the whole Iceberg table on every run. "
            ~ "Set partition_by, or use 'merge' with a unique_key.") }}
    {%- endif -%}
    {%- if strategy == 'merge' and not unique_key -%}
        {{ exceptions.raise_compiler_error(
            "Model " ~ this ~ ": incremental_strategy 'merge' needs a unique_key.") }}
    {%- endif -%}
{% endmacro %}


{% macro floe_relation_is_empty(relation) %}
    {%- set probe = run_query('select 1 from ' ~ relation ~ ' limit 1') -%}
    {{ return(probe is none or (probe.rows | length) == 0) }}
{% endmacro %}
