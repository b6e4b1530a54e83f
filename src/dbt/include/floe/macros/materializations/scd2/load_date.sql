{#
    The load date an scd2 model selects on: `where load_date = {{ floe_scd2_load_date() }}`.
    A marker the materialization replaces with each pending load's date when
    it renders the model for that load (scd2.sql).
#}
{% macro floe_scd2_load_date() -%}
    cast('__FLOE_SCD2_LOAD_DATE__' as date)
{%- endmacro %}


{#
    Every pending load at once, for a model written in the multi-load form
    (docs/scd2.md, "One rendering for every load"): a relation of
    `_scd2_load int` (the load's position, 1 = oldest) and `load_date date`.
    The model returns `_scd2_load` with each row and is rendered once; the
    materialization puts the pending loads in place of the one row below,
    which is what compiling the model alone (docs, lineage) shows.
#}
{% macro floe_scd2_loads() -%}
    (select * from values (1, cast('__FLOE_SCD2_LOAD_DATE__' as date)) as __floe_scd2_loads(_scd2_load, load_date))
{%- endmacro %}
