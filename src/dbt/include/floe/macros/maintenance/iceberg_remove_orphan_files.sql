{#
    Deletes files under the table's location that no snapshot references and
    that are older than `older_than_days` (remove_orphan_files).
#}
{% macro iceberg_remove_orphan_files(table, older_than_days=3) %}
    {{ return(adapter.dispatch('iceberg_remove_orphan_files', 'dbt')(table, older_than_days)) }}
{% endmacro %}

{% macro default__iceberg_remove_orphan_files(table, older_than_days) %}
    {{ return(iceberg_call('remove_orphan_files',
        "table => " ~ floe_string_literal(table)
        ~ ", older_than => " ~ iceberg_days_ago(older_than_days))) }}
{% endmacro %}
