{#
    `expr` as text with every character but the last `keep_last` replaced by
    `mask_char` (a phone number keeps its last 4 digits). NULL stays NULL. Plain SQL:
    no secret is involved, and the result cannot be reversed.
#}
{% macro privacy_redact(expr, keep_last=4, mask_char='#') %}
    {{ return(adapter.dispatch('privacy_redact', 'dbt')(expr, keep_last, mask_char)) }}
{% endmacro %}

{% macro default__privacy_redact(expr, keep_last, mask_char) %}
    {%- if keep_last is boolean or not modules.re.match('^[0-9]+$', keep_last | string) -%}
        {{ exceptions.raise_compiler_error(
            "privacy_redact: keep_last must be an integer >= 0, not '" ~ keep_last ~ "'") }}
    {%- endif -%}
    {%- if mask_char is not string or mask_char | length != 1 -%}
        {{ exceptions.raise_compiler_error(
            "privacy_redact: mask_char must be one character, not '" ~ mask_char ~ "'") }}
    {%- endif -%}
    {%- set text = 'cast(' ~ expr ~ ' as string)' -%}
    {%- set n = keep_last | int -%}
    {{ return('concat(repeat(' ~ floe_string_literal(mask_char) ~ ', greatest(char_length('
        ~ text ~ ') - ' ~ n ~ ', 0)), right(' ~ text ~ ', ' ~ n ~ '))') }}
{% endmacro %}
