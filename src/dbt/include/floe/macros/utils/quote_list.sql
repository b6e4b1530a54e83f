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


{#
    A value read from landed data (a batch's key, its bounds) as a literal of
    type `dtype`: its UTF-8 bytes hex-encoded (X'...') and cast. No character of
    the value is parsed as SQL, and the result does not depend on how the session
    reads escapes in string literals (spark.sql.parser.escapedStringLiterals).
    Spark folds the casts into a plain literal before planning, so the value is
    still pushed into an Iceberg scan (tests/materializations/test_value_literals.py).
#}
{% macro floe_value_literal(value, dtype) -%}
    cast(cast(X'{{ (value | string).encode('utf-8').hex() }}' as string) as {{ dtype }})
{%- endmacro %}
