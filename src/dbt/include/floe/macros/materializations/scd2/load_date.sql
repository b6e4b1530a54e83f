{#
    The load date an scd2 model selects on: `where load_date = {{ floe_scd2_load_date() }}`.
    A marker the materialization replaces with each pending load's date when
    it renders the model for that load (scd2.sql).
#}
{% macro floe_scd2_load_date() -%}
    cast('__FLOE_SCD2_LOAD_DATE__' as date)
{%- endmacro %}
