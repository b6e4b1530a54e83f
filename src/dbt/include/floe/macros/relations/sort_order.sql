{#
    Sort order for predicate columns (`sort_by` option): data files written
    afterwards, and compaction with the sort strategy, keep rows ordered so
    min/max statistics prune files. Set on creation and when it changes.
#}
{% macro floe_apply_sort_order(relation, current=none) %}
    {%- set sort_by = floe_option('sort_by') -%}
    {%- if not sort_by -%}{{ return(none) }}{%- endif -%}
    {%- set sort_by = [sort_by] if sort_by is string else sort_by -%}
    {%- if current is not none and current.get('floe.sort-by') == sort_by | join(',') -%}
        {{ return(none) }}
    {%- endif -%}
    {%- call statement('write_ordered_by') -%}
        alter table {{ relation }} write ordered by {{ sort_by | join(', ') }}
    {%- endcall -%}
    {%- call statement('remember_sort_order') -%}
        alter table {{ relation }} set tblproperties ('floe.sort-by' = {{ floe_string_literal(sort_by | join(',')) }})
    {%- endcall -%}
{% endmacro %}
