{#
    Iceberg maintenance as dbt run-operations, for one table at a time
    (`floe maintain` does every table by the policy stored on each):

        dbt run-operation iceberg_compact --args '{table: marts.mlb_data, strategy: sort}'
        dbt run-operation iceberg_expire_snapshots --args '{table: marts.mlb_data, retain_last: 5, older_than_days: 7}'
        dbt run-operation iceberg_remove_orphan_files --args '{table: marts.mlb_data, older_than_days: 3}'
        dbt run-operation iceberg_rewrite_manifests --args '{table: marts.mlb_data}'

    `table` is `schema.table` in the `lake` catalog. Each prints the procedure's result.
#}

{% macro iceberg_compact(table, strategy='binpack', min_input_files=2) %}
    {%- if strategy not in ['binpack', 'sort'] -%}
        {{ exceptions.raise_compiler_error("iceberg_compact: strategy must be binpack or sort") }}
    {%- endif -%}
    {{ return(iceberg_call('rewrite_data_files',
        "table => '" ~ table ~ "', strategy => '" ~ strategy ~ "', "
        ~ "options => map('min-input-files', '" ~ min_input_files ~ "')")) }}
{% endmacro %}

{% macro iceberg_expire_snapshots(table, retain_last=5, older_than_days=7) %}
    {{ return(iceberg_call('expire_snapshots',
        "table => '" ~ table ~ "', retain_last => " ~ retain_last
        ~ ", older_than => " ~ iceberg_days_ago(older_than_days))) }}
{% endmacro %}

{% macro iceberg_remove_orphan_files(table, older_than_days=3) %}
    {{ return(iceberg_call('remove_orphan_files',
        "table => '" ~ table ~ "', older_than => " ~ iceberg_days_ago(older_than_days))) }}
{% endmacro %}

{% macro iceberg_rewrite_manifests(table) %}
    {{ return(iceberg_call('rewrite_manifests', "table => '" ~ table ~ "'")) }}
{% endmacro %}

{% macro iceberg_days_ago(days) %}
    {#- Procedure arguments must be literals: the cut-off as a TIMESTAMP literal. -#}
    {%- set cutoff = modules.datetime.datetime.now() - modules.datetime.timedelta(days=days | float) -%}
    {{ return("timestamp '" ~ cutoff.strftime('%Y-%m-%d %H:%M:%S') ~ "'") }}
{% endmacro %}

{% macro iceberg_call(procedure, arguments) %}
    {%- set result = run_query('call lake.system.' ~ procedure ~ '(' ~ arguments ~ ')') -%}
    {%- if execute -%}
        {%- for row in result.rows -%}
            {{ log(procedure ~ ' ' ~ (arguments.split(',')[0]) ~ ': '
                   ~ dict(zip(result.column_names, row.values())), info=True) }}
        {%- endfor -%}
    {%- endif -%}
    {{ return(result) }}
{% endmacro %}
