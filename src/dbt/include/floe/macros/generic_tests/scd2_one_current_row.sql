{#
    Invariants of a Type 2 dimension, as generic data tests (rows returned = failures).
#}

{% test scd2_one_current_row(model, key, valid_to='valid_to', sentinel='9999-12-31') %}
    -- At most one current version per key.
    select {{ key }}, count(*) as current_rows
    from {{ model }}
    where {{ valid_to }} = date'{{ sentinel }}'
    group by {{ key }}
    having count(*) > 1
{% endtest %}


{% test scd2_valid_intervals(model, key, valid_from='valid_from', valid_to='valid_to') %}
    -- No inverted interval, and each version ends before the next one starts.
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
{% endtest %}
