{#
    Environments (docs/envs.md): with FLOE_ENV=<name>, the adapter sets
    spark.wap.branch = env_<name> for the run, so reads of a table that has that
    branch read it and every other table reads main, and INSERT / MERGE into a table
    with write.wap.enabled commit to the branch only. A `create or replace table`
    would replace the whole table (main included), so in an environment a table model
    is written with INSERT OVERWRITE instead, and a model new to the environment is
    created empty on main, marked floe.env.created, and filled on its branch.
#}

{% macro floe_env_branch() %}
    {%- set name = adapter.floe_env() -%}
    {{ return('env_' ~ name if name else '') }}
{% endmacro %}


{% macro floe_env_has_branch(relation, branch) %}
    {{ return(adapter.floe_env_table(relation, branch)['has_branch']) }}
{% endmacro %}


{% macro floe_env_ensure_wap(relation, state=none) %}
    {#- `state`: adapter.floe_env_table's answer, when the caller has it already. -#}
    {%- set state = state or adapter.floe_env_table(relation, floe_env_branch()) -%}
    {%- if not state['wap'] -%}
        {%- call statement('floe_env_wap') -%}
            alter table {{ relation }} set tblproperties ('write.wap.enabled' = 'true')
        {%- endcall -%}
    {%- endif -%}
{% endmacro %}


{% macro floe_env_rows_view() %}
    {{ return('floe_env_rows__' ~ this.identifier) }}
{% endmacro %}


{% macro floe_env_python_rows(compiled_code) %}
    {#- A Python model's code that leaves its rows in the temporary view
        floe_env_rows_view() instead of writing the table: dbt-spark's Python write
        (`saveAsTable`, overwrite) would replace main's table. The materialization runs
        it (dbt lets only a materialization submit Python), then floe_env_write_table. -#}
    {%- set code -%}
{{ compiled_code }}
# --- floe: the model's rows, for the environment's branch (envs/env.sql) --- #
dbt = dbtObj(spark.table)
df = model(dbt, spark)
import pyspark
if not isinstance(df, pyspark.sql.dataframe.DataFrame):
    df = df.to_spark() if hasattr(df, "to_spark") else spark.createDataFrame(df)
df.createOrReplaceTempView("{{ floe_env_rows_view() }}")
    {%- endset -%}
    {{ return(code) }}
{% endmacro %}


{% macro floe_env_write_table(target_relation, old_relation, compiled_code, language) %}
    {#- Replace the rows of `target_relation` on the environment's branch only. -#}
    {%- set env = adapter.floe_env() -%}
    {%- if old_relation is not none and (old_relation.is_view or not old_relation.is_iceberg) -%}
        {{ exceptions.raise_compiler_error(
            "Model " ~ this ~ ": main has a view or a non-Iceberg table here; it cannot be "
            ~ "replaced by a table in environment " ~ env ~ " (not supported yet)") }}
    {%- endif -%}
    {%- if language == 'python' -%}
        {#- The materialization ran the model into this view first
            (floe_env_python_rows): write its rows the way a SQL model's are. -#}
        {%- set rows_view = floe_env_rows_view() -%}
        {%- set compiled_code = 'select * from ' ~ rows_view -%}
        {%- set language = 'sql' -%}
    {%- endif -%}
    {%- if old_relation is none -%}
        {#- New in the environment: an empty table on main that `floe env drop`
            removes and `floe env publish` keeps. -#}
        {%- call statement('floe_env_create') -%}
            {{ create_table_as(False, target_relation,
                'select * from (' ~ compiled_code ~ ') as floe_env_new where false', language) }}
        {%- endcall -%}
        {%- call statement('floe_env_mark') -%}
            alter table {{ target_relation }} set tblproperties (
                'write.wap.enabled' = 'true', 'floe.env.created' = '{{ env }}')
        {%- endcall -%}
    {%- else -%}
        {#- One catalog read and the analyzer (no Spark job) answer what a `.refs`
            query, `show tblproperties`, `describe` and a `limit 0` query did
            (docs/decisions/0055-environment-build-and-diff-costs.md). -#}
        {%- set state = adapter.floe_env_table(target_relation, floe_env_branch()) -%}
        {%- do floe_env_ensure_wap(target_relation, state) -%}
        {%- set have = state['columns'] -%}
        {%- set want = adapter.floe_query_columns(compiled_code) | map('lower') | list -%}
        {%- if have | sort != want | sort -%}
            {{ exceptions.raise_compiler_error(
                "Model " ~ this ~ " changes the table's columns (main: " ~ have | join(', ')
                ~ "; model: " ~ want | join(', ') ~ "). Columns are shared by every branch "
                ~ "of an Iceberg table, so environment " ~ env ~ " cannot change them (not "
                ~ "supported yet): build the change in a separate schema, or on main") }}
        {%- endif -%}
    {%- endif -%}
    {%- call statement('main') -%}
        insert overwrite {{ target_relation }} by name
        {{ compiled_code }}
    {%- endcall -%}
    {%- if rows_view is defined -%}
        {%- do run_query('drop view if exists ' ~ rows_view) -%}
    {%- endif -%}
{% endmacro %}


{% macro floe__create_view_as(relation, sql) -%}
    {#- Untyped nulls get a type first: Iceberg views reject `void` (floe_typed_select). -#}
    {%- set sql = floe_typed_select(sql) -%}
    {%- set env = adapter.floe_env() -%}
    {%- if not env -%}
        {{ spark__create_view_as(relation, sql) }}
    {%- else -%}
        {#- Views have no branches: an unchanged view is left alone (its tables resolve
            to the environment's branches when read in it), a new one is marked as the
            environment's, a changed one is refused rather than changing main. -#}
        {%- set existing = adapter.get_relation(relation.database, relation.schema, relation.identifier) -%}
        {%- if existing is none -%}
            create or replace view {{ relation }}
            tblproperties ('floe.env.created' = '{{ env }}')
            as {{ sql }}
        {%- else -%}
            {%- set shown = run_query('show create table ' ~ relation)[0][0] -%}
            {%- set created = floe_table_property(relation, 'floe.env.created') -%}
            {%- set current = shown.split('\nAS\n', 1)[-1] -%}
            {%- if created == env -%}
                create or replace view {{ relation }}
                tblproperties ('floe.env.created' = '{{ env }}')
                as {{ sql }}
            {%- elif current | trim == sql | trim -%}
                select 'view unchanged, shared with main' as floe_skipped
            {%- else -%}
                {{ exceptions.raise_compiler_error(
                    "View " ~ relation ~ " differs from main's, and views have no branches: "
                    ~ "environment " ~ env ~ " cannot change it (not supported yet). "
                    ~ "Materialize the model as a table while you try the change, or "
                    ~ "change it on main") }}
            {%- endif -%}
        {%- endif -%}
    {%- endif -%}
{%- endmacro %}
