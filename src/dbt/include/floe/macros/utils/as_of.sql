{#
    as_of: the join condition that picks the version of a dimension valid at an
    event's time (a point-in-time lookup).

        select o.*, p.priority
        from orders as o
        left join product_priority_history as p
            on o.item = p.item
            and {{ as_of('o.arrival_ts', 'p', 'valid_from', 'valid_to') }}

    grain='day' (floe's scd2 tables: date columns, valid_to inclusive, sentinel
    for current): the event's date lies in [valid_from, valid_to].
    grain='timestamp' (dbt snapshots: dbt_valid_from/dbt_valid_to timestamps,
    valid_to exclusive, NULL while current): valid_from <= event < valid_to.
#}
{% macro as_of(event_ts, dim, valid_from='valid_from', valid_to='valid_to', grain='day') -%}
    {{ return(adapter.dispatch('as_of', 'dbt')(event_ts, dim, valid_from, valid_to, grain)) }}
{%- endmacro %}

{% macro default__as_of(event_ts, dim, valid_from, valid_to, grain) -%}
    {%- if grain == 'day' -%}
        (cast({{ event_ts }} as date) >= {{ dim }}.{{ valid_from }}
            and cast({{ event_ts }} as date) <= {{ dim }}.{{ valid_to }})
    {%- elif grain == 'timestamp' -%}
        ({{ event_ts }} >= {{ dim }}.{{ valid_from }}
            and ({{ dim }}.{{ valid_to }} is null or {{ event_ts }} < {{ dim }}.{{ valid_to }}))
    {%- else -%}
        {{ exceptions.raise_compiler_error(
            "as_of: grain must be 'day' or 'timestamp', not '" ~ grain ~ "'") }}
    {%- endif -%}
{%- endmacro %}
