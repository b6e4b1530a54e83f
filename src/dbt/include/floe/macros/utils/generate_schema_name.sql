{#
    Schemas (Iceberg namespaces) have fixed names on every target: a model
    configured with `schema: marts` lands in `marts`, never `<target>_marts`.
#}
{% macro generate_schema_name(custom_schema_name, node) -%}
    {%- if custom_schema_name is none -%}
        {{ target.schema | trim }}
    {%- else -%}
        {{ custom_schema_name | trim }}
    {%- endif -%}
{%- endmacro %}
