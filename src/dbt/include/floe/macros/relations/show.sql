{#
    `dbt show -s <model>`: dbt runs the model's compiled SQL with a limit. For a
    model whose SQL describes a change to apply rather than the table it builds
    (`scd2`: one pending load; `incremental_strategy: cdc`: the unapplied changes),
    that is the pending batch, usually empty: show the built table instead, as an
    analyst expects. Every other model, and `dbt show --inline`, shows its SQL's rows.
#}
{% macro floe__get_limit_sql(sql, limit) -%}
    {#- dbt show's query (get_show_sql) and a data test's limit both come here; only a
        model node of those materializations is shown from its table -#}
    {%- if floe_shows_built_relation() -%}
        {%- set built = adapter.get_relation(this.database, this.schema, this.identifier) -%}
        {%- if built is none -%}
            {{ exceptions.raise_compiler_error(
                "Model " ~ this ~ " (materialized " ~ config.get('materialized')
                ~ ") shows its built table, which does not exist yet: run `dbt build -s "
                ~ model.name ~ "` first") }}
        {%- endif -%}
        {%- set sql = 'select * from ' ~ built -%}
    {%- endif -%}
    {{ default__get_limit_sql(sql, limit) }}
{%- endmacro %}


{% macro floe_shows_built_relation() -%}
    {%- if model is not defined or model.get('resource_type') != 'model' -%}
        {{ return(false) }}
    {%- endif -%}
    {%- set materialized = config.get('materialized') -%}
    {{ return(materialized == 'scd2'
        or (materialized == 'incremental' and config.get('incremental_strategy') == 'cdc')) }}
{%- endmacro %}
