{#
    Invariant of a Type 2 dimension, as a generic data test (rows returned =
    failures): at most one current version (valid_to = sentinel) per key.
#}
{% test scd2_one_current_row(model, key, valid_to='valid_to', sentinel='9999-12-31') %}
    {{ return(adapter.dispatch('test_scd2_one_current_row', 'dbt')(model, key, valid_to, sentinel)) }}
{% endtest %}

{% macro default__test_scd2_one_current_row(model, key, valid_to, sentinel) %}
    select
        {{ key }},
        count(*) as current_rows
    from {{ model }}
    where {{ valid_to }} = cast({{ floe_string_literal(sentinel) }} as date)
    group by {{ key }}
    having count(*) > 1
{% endmacro %}
