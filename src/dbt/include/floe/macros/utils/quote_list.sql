{#
    Values as a comma-separated list of Spark SQL string literals. Spark reads
    backslash escapes inside literals, so backslashes are doubled before quotes
    are escaped: no value can end a literal early.
#}
{% macro floe_quote_list(values) -%}
    {%- for v in values -%}
        {{ floe_string_literal(v) }}{{ ', ' if not loop.last }}
    {%- endfor -%}
{%- endmacro %}

{% macro floe_string_literal(value) -%}
    '{{ value | string | replace("\\", "\\\\") | replace("'", "\\'") }}'
{%- endmacro %}
