{#
    The clear text of a `privacy_encrypt`ed column. Only sessions of authorized jobs
    have the `floe_decrypt` function (floe.privacy.functions.register_decrypt); in
    any other session the compiled SQL fails with "function not found".
#}
{% macro privacy_decrypt(expr) %}
    {{ return(adapter.dispatch('privacy_decrypt', 'dbt')(expr)) }}
{% endmacro %}

{% macro default__privacy_decrypt(expr) %}
    {{ return('floe_decrypt(' ~ expr ~ ')') }}
{% endmacro %}
