{#
    Deterministic encryption of `expr` (AES-SIV, key FLOE_PRIVACY_KEY; docs/privacy.md):
    equal values give equal ciphertexts, so an encrypted column still joins and groups.
    `privacy_decrypt` reverses it in jobs that registered the decrypt function.
#}
{% macro privacy_encrypt(expr) %}
    {{ return(adapter.dispatch('privacy_encrypt', 'dbt')(expr)) }}
{% endmacro %}

{% macro default__privacy_encrypt(expr) %}
    {{ return('floe_encrypt(cast(' ~ expr ~ ' as string))') }}
{% endmacro %}
