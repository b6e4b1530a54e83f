{#
    Schemas (Iceberg namespaces) have fixed names on every target: a model
    configured with `schema: marts` lands in `marts`, never `<target>_marts`
    (dbt's default). dbt-core's `generate_schema_name` dispatches to this for
    the floe adapter; a project that wants dbt's naming back defines its own
    `generate_schema_name` (or `floe__generate_schema_name`).
#}
{% macro floe__generate_schema_name(custom_schema_name, node) -%}
    {%- if custom_schema_name is none -%}
        {{ target.schema | trim }}
    {%- else -%}
        {{ custom_schema_name | trim }}
    {%- endif -%}
{%- endmacro %}
