{#
    The irreversible hash of `expr` (docs/privacy.md): HMAC-SHA256 keyed by the salt
    from the environment (FLOE_PRIVACY_SALT), as 64 hex characters. The salt never
    appears in SQL: `floe_hash` is a function floe's runtime registers in the session.
#}
{% macro privacy_hash(expr) %}
    {{ return(adapter.dispatch('privacy_hash', 'dbt')(expr)) }}
{% endmacro %}

{% macro default__privacy_hash(expr) %}
    {{ return('floe_hash(cast(' ~ expr ~ ' as string))') }}
{% endmacro %}
