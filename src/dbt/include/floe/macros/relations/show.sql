{#
    `dbt show -s <model>`: dbt runs the model's compiled SQL with a limit. For a
    model whose SQL describes a change to apply rather than the table it builds
    (`scd2`: one pending load; `incremental_strategy: cdc`: the unapplied changes),
    that is the pending batch, usually empty: show the built table instead, as an
    analyst expects. Every other model, and `dbt show --inline`, shows its SQL's rows.
#}
{% macro get_show_sql(compiled_code, sql_header, limit) -%}
    {%- if floe_shows_built_relation() -%}
        {%- set built = adapter.get_relation(this.database, this.schema, this.identifier) -%}
        {%- if built is none -%}
            {{ exceptions.raise_compiler_error(
                "Model " ~ this ~ " (materialized " ~ config.get('materialized')
                ~ ") shows its built table, which does not exist yet: run `dbt build -s "
                ~ model.name ~ "` first") }}
        {%- endif -%}
        {%- set compiled_code = 'select * from ' ~ built -%}
    {%- endif -%}
    {%- if sql_header is not none -%}
    {{ sql_header }}
    {%- endif %}
    {{ get_limit_subquery_sql(compiled_code, limit) }}
{%- endmacro %}


{% macro floe_shows_built_relation() -%}
    {%- if model is not defined or model.get('resource_type') != 'model' -%}
        {{ return(false) }}
    {%- endif -%}
    {%- set materialized = config.get('materialized') -%}
    {{ return(materialized == 'scd2'
        or (materialized == 'incremental' and config.get('incremental_strategy') == 'cdc')) }}
{%- endmacro %}
