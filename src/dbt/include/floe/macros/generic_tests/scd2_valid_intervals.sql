{#
    Invariant of a Type 2 dimension, as a generic data test (rows returned =
    failures): no inverted interval, and each version of a key ends before the
    next one starts.
#}
{% test scd2_valid_intervals(model, key, valid_from='valid_from', valid_to='valid_to') %}
    {{ return(adapter.dispatch('test_scd2_valid_intervals', 'dbt')(model, key, valid_from, valid_to)) }}
{% endtest %}

{% macro default__test_scd2_valid_intervals(model, key, valid_from, valid_to) %}
    with ordered as (
        select
            {{ key }},
            {{ valid_from }} as vf,
            {{ valid_to }} as vt,
            lead({{ valid_from }}) over (
                partition by {{ key }} order by {{ valid_from }}, {{ valid_to }}
            ) as next_vf
        from {{ model }}
    )

    select
        *,
        case when vt < vf then 'inverted interval' else 'overlaps next version' end as problem
    from ordered
    where vt < vf or (next_vf is not null and next_vf <= vt)
{% endmacro %}
