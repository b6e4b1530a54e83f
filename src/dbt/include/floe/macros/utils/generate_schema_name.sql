{#
    Schemas (Iceberg namespaces) have fixed names on every target: a model
    configured with `schema: marts` lands in `marts`, never `<target>_marts`
    (dbt's default). dbt-core's `generate_schema_name` dispatches to this for
    the floe adapter; a project that wants dbt's naming back defines its own
    `generate_schema_name` (or `floe__generate_schema_name`).
    Slim CI builds into prefixed schemas of the same catalog with
    `--vars '{schema_prefix: ci_}'` (docs/lineage.md): `--defer` then resolves
    unselected refs to the production tables, and nothing production reads is
    replaced. dbt compares unrendered schema configs, so the prefix does not
    mark nodes as modified.
#}
{% macro floe__generate_schema_name(custom_schema_name, node) -%}
    {%- set prefix = var('schema_prefix', '') | trim -%}
    {%- if custom_schema_name is none -%}
        {{ prefix ~ target.schema | trim }}
    {%- else -%}
        {{ prefix ~ custom_schema_name | trim }}
    {%- endif -%}
{%- endmacro %}
