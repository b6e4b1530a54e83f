{# Rewrites the table's manifests so scan planning reads few, clustered ones. #}
{% macro iceberg_rewrite_manifests(table) %}
    {{ return(adapter.dispatch('iceberg_rewrite_manifests', 'dbt')(table)) }}
{% endmacro %}

{% macro default__iceberg_rewrite_manifests(table) %}
    {{ return(iceberg_call('rewrite_manifests', "table => " ~ floe_string_literal(table))) }}
{% endmacro %}
