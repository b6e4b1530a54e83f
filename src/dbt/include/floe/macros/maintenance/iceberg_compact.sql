{# Compacts small data files (rewrite_data_files); `strategy`: binpack or sort. #}
{% macro iceberg_compact(table, strategy='binpack', min_input_files=2) %}
    {{ return(adapter.dispatch('iceberg_compact', 'dbt')(table, strategy, min_input_files)) }}
{% endmacro %}

{% macro default__iceberg_compact(table, strategy, min_input_files) %}
    {%- if strategy not in ['binpack', 'sort'] -%}
        {{ exceptions.raise_compiler_error(
            "iceberg_compact: strategy must be binpack or sort, not '" ~ strategy ~ "'") }}
    {%- endif -%}
    {{ return(iceberg_call('rewrite_data_files',
        "table => " ~ floe_string_literal(table) ~ ", strategy => '" ~ strategy ~ "', "
        ~ "options => map('min-input-files', '"
        ~ iceberg_number_arg('min_input_files', min_input_files, integer=true) ~ "')")) }}
{% endmacro %}
