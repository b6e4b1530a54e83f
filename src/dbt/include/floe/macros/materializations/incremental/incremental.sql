{#
    floe's incremental materialization (SQL and Python models).

    Same contract as dbt-spark's, plus:
    - new rows are a temporary view (SQL and Python alike; Python models run
      in this session), never a scratch table;
    - when the new rows are empty nothing is written, so a re-run with no new
      input commits no Iceberg snapshot;
    - `insert_overwrite` without `partition_by` is refused: on Iceberg it would
      replace the whole table;
    - a unique_key column the model does not have fails every incremental run,
      even one with no new rows (validate.sql);
    - schema changes default to `append_new_columns`: columns are added, never
      dropped unless the model asks for `sync_all_columns`; column types widen
      only where Iceberg can (int -> bigint, float -> double, decimal
      precision), anything else fails naming the table, column and both types
      (schema_evolution.sql);
    - strategy `cdc` (cdc/): op-aware latest-change-per-key MERGE;
    - strategy `microbatch` (microbatch.sql): each batch replaces exactly its
      event-time window in one commit, no partition_by needed.
#}
{% materialization incremental, adapter='floe', supported_languages=['sql', 'python'] -%}
    {%- set strategy = config.get('incremental_strategy') or 'append' -%}
    {%- set unique_key = config.get('unique_key', none) -%}
    {%- set partition_by = config.get('partition_by', none) -%}
    {%- set language = model['language'] -%}
    {%- set grant_config = config.get('grants') -%}
    {#- dbt fills on_schema_change with 'ignore' when nobody set it: floe's
        default is append_new_columns, so only an explicit setting counts. -#}
    {%- set on_schema_change = config.get('on_schema_change') -%}
    {%- if 'on_schema_change' not in model.get('unrendered_config', {}) -%}
        {%- set on_schema_change = 'append_new_columns' -%}
    {%- endif -%}
    {%- set on_schema_change = incremental_validate_on_schema_change(
        on_schema_change, default='append_new_columns') -%}
    {%- set incremental_predicates = config.get('predicates', none)
        or config.get('incremental_predicates', none) -%}
    {{ floe_validate_incremental(strategy, unique_key, partition_by) }}

    {%- set target_relation = this.incorporate(type='table') -%}
    {%- set existing_relation = load_relation(this) -%}
    {%- set tmp_relation = make_temp_relation(this).include(database=false, schema=false) -%}

    {{ run_hooks(pre_hooks) }}

    {%- if strategy == 'cdc' -%}
        {%- if language != 'sql' -%}
            {{ exceptions.raise_compiler_error(
                "Model " ~ this ~ ": incremental_strategy 'cdc' is for SQL models; "
                ~ "keep the Python model as the raw append and put a SQL model on top") }}
        {%- endif -%}
        {%- do floe_cdc_build(target_relation, existing_relation, tmp_relation,
            compiled_code, on_schema_change) -%}
    {%- elif floe_env_branch() and (existing_relation is none or should_full_refresh()) -%}
        {#- In an environment (envs/env.sql): a full build goes to the branch. -#}
        {%- if language == 'python' -%}
            {%- call statement('floe_env_python', language='python') -%}
{{ floe_env_python_rows(compiled_code) }}
            {%- endcall -%}
        {%- endif -%}
        {%- do floe_env_write_table(target_relation, existing_relation, compiled_code, language) -%}
    {%- elif existing_relation is none or existing_relation.is_view or should_full_refresh() -%}
        {%- if existing_relation is not none -%}
            {% do adapter.drop_relation(existing_relation) %}
        {%- endif -%}
        {%- call statement('main', language=language) -%}
            {{ create_table_as(False, target_relation, compiled_code, language) }}
        {%- endcall -%}
    {%- else -%}
        {%- if floe_env_branch() -%}{%- do floe_env_ensure_wap(target_relation) -%}{%- endif -%}
        {%- call statement('create_tmp_relation', language=language) -%}
            {{ create_table_as(True, tmp_relation, compiled_code, language) }}
        {%- endcall -%}
        {%- if strategy == 'merge' -%}
            {%- do floe_validate_unique_key(
                unique_key, adapter.get_columns_in_relation(tmp_relation)) -%}
        {%- endif -%}
        {%- if strategy == 'microbatch' -%}
            {%- do floe_schema_evolve(on_schema_change, tmp_relation, existing_relation) -%}
            {%- do floe_microbatch_replace(tmp_relation, target_relation) -%}
        {%- elif floe_relation_is_empty(tmp_relation) -%}
            {{ log(this ~ ': no new rows, nothing committed', info=False) }}
            {%- call statement('main') -%}
                select 'no new rows' as floe_skipped
            {%- endcall -%}
        {%- else -%}
            {%- do floe_schema_evolve(on_schema_change, tmp_relation, existing_relation) -%}
            {%- if strategy == 'insert_overwrite' -%}
                {%- call statement('dynamic_overwrite') -%}
                    set spark.sql.sources.partitionOverwriteMode = DYNAMIC
                {%- endcall -%}
            {%- endif -%}
            {%- call statement('main') -%}
                {{ floe_get_incremental_sql(
                    strategy, tmp_relation, target_relation, existing_relation,
                    unique_key, incremental_predicates) }}
            {%- endcall -%}
        {%- endif -%}
        {%- call statement('drop_tmp_relation') -%}
            drop view if exists {{ tmp_relation }}
        {%- endcall -%}
    {%- endif -%}

    {% set should_revoke = should_revoke(existing_relation, should_full_refresh()) %}
    {% do apply_grants(target_relation, grant_config, should_revoke) %}
    {% do persist_docs(target_relation, model) %}
    {{ run_hooks(post_hooks) }}
    {{ return({'relations': [target_relation]}) }}
{%- endmaterialization %}
