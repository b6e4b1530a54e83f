{#
    Iceberg maintenance as dbt run-operations, for one table at a time
    (`floe maintain` does every table by the policy stored on each):

        dbt run-operation iceberg_compact --args '{table: marts.mlb_data, strategy: sort}'
        dbt run-operation iceberg_expire_snapshots --args '{table: marts.mlb_data, retain_last: 5, older_than_days: 7}'
        dbt run-operation iceberg_remove_orphan_files --args '{table: marts.mlb_data, older_than_days: 3}'
        dbt run-operation iceberg_rewrite_manifests --args '{table: marts.mlb_data}'

    `table` is `schema.table` in the `lake` catalog. Each prints the procedure's result.

    Arguments are checked (a retain count that is not an integer fails naming
    the operation) and the table name is passed as an escaped string literal.
#}


{# Runs `CALL lake.system.<procedure>(<arguments>)` and logs each result row. #}
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


{# Procedure arguments must be literals: the cut-off `days` ago as a TIMESTAMP literal. #}
{% macro iceberg_days_ago(days) %}
    {%- set cutoff = modules.datetime.datetime.now()
        - modules.datetime.timedelta(days=iceberg_number_arg('older_than_days', days) | float) -%}
    {{ return("timestamp '" ~ cutoff.strftime('%Y-%m-%d %H:%M:%S') ~ "'") }}
{% endmacro %}


{# `value` if it is a number (or a string of one), else an error naming the argument. #}
{% macro iceberg_number_arg(name, value, integer=false) %}
    {%- set pattern = '^-?[0-9]+$' if integer else '^-?[0-9]+([.][0-9]+)?$' -%}
    {%- if value is boolean or not modules.re.match(pattern, value | string) -%}
        {{ exceptions.raise_compiler_error(
            "Iceberg maintenance: " ~ name ~ " must be " ~ ('an integer' if integer else 'a number')
            ~ ", not '" ~ value ~ "'") }}
    {%- endif -%}
    {{ return(value | string) }}
{% endmacro %}
