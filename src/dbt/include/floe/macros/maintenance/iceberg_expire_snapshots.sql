{#
    Expires snapshots older than `older_than_days`, keeping at least the last
    `retain_last` (expire_snapshots); files only they referenced are deleted.
#}
{% macro iceberg_expire_snapshots(table, retain_last=5, older_than_days=7) %}
    {{ return(adapter.dispatch('iceberg_expire_snapshots', 'dbt')(table, retain_last, older_than_days)) }}
{% endmacro %}

{% macro default__iceberg_expire_snapshots(table, retain_last, older_than_days) %}
    {{ return(iceberg_call('expire_snapshots',
        "table => " ~ floe_string_literal(table)
        ~ ", retain_last => " ~ iceberg_number_arg('retain_last', retain_last, integer=true)
        ~ ", older_than => " ~ iceberg_days_ago(older_than_days))) }}
{% endmacro %}
