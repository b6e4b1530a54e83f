{# True when the relation has no rows (reads at most one). #}
{% macro floe_relation_is_empty(relation) %}
    {%- set probe = run_query('select 1 from ' ~ relation ~ ' limit 1') -%}
    {{ return(probe is none or (probe.rows | length) == 0) }}
{% endmacro %}
