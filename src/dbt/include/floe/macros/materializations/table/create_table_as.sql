{#
    A SQL table model's CREATE: always `create or replace table` (dbt-spark writes a
    plain `create table` unless file_format is delta or iceberg, which fails on the
    second build of a model that does not set `+file_format`: every table floe's
    catalog makes is an Iceberg table, so one replaces it atomically, like a rebuild
    with the format set). No file_format means `using iceberg`.

    The select is the model's, typed (floe_typed_select: an untyped `null` column
    becomes a typed one) and, under an enforced contract, checked against the
    contract's columns and its constraints (floe_enforced_select: a row breaking a
    not_null or check constraint fails the write before Iceberg commits anything).
#}
{% macro floe_create_table_as_sql(relation, compiled_code) -%}
    {%- set contract_config = config.get('contract') -%}
    {%- if contract_config.enforced -%}
        {{ get_assert_columns_equivalent(compiled_code) }}
        {%- set compiled_code = get_select_subquery(compiled_code) -%}
        {%- set compiled_code = floe_enforced_select(compiled_code) -%}
    {%- endif -%}
    {%- set compiled_code = floe_typed_select(compiled_code) %}
    create or replace table {{ relation }}
    {%- if config.get('file_format') is none %}
    using iceberg
    {%- else %}
    {{ file_format_clause() }}
    {%- endif %}
    {{ options_clause() }}
    {{ tblproperties_clause() }}
    {{ partition_cols(label="partitioned by") }}
    {{ clustered_cols(label="clustered by") }}
    {{ location_clause() }}
    {{ comment_clause() }}
    as
    {{ compiled_code }}
{%- endmacro %}


{#
    `sql` with every column of Spark's `void` type (an untyped `null`) cast to
    string; `sql` unchanged when it has none (floe.adapter.FloeAdapter.floe_void_columns
    asks Spark's analyzer, only for SQL that mentions null at all).
#}
{% macro floe_typed_select(sql) -%}
    {%- set void_columns = adapter.floe_void_columns(sql) -%}
    {%- if not void_columns -%}
        {{ return(sql) }}
    {%- endif -%}
    {%- set typed = [] -%}
    {%- for column in adapter.floe_query_columns(sql) -%}
        {%- set quoted = '`' ~ column | replace('`', '``') ~ '`' -%}
        {%- if column in void_columns -%}
            {%- do typed.append('cast(' ~ quoted ~ ' as string) as ' ~ quoted) -%}
        {%- else -%}
            {%- do typed.append(quoted) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return('select ' ~ typed | join(', ') ~ ' from (\n' ~ sql ~ '\n) as floe_typed') }}
{%- endmacro %}
