{#
    Iceberg table properties of a model: floe's defaults, overridden by the
    model's `tblproperties` config. format-version 2 is what row-level deletes
    (MERGE, DELETE) need.
#}
{% macro floe_table_properties() %}
    {%- set props = {'format-version': '2'} -%}
    {%- do props.update(config.get('tblproperties') or {}) -%}
    {{ return(props) }}
{% endmacro %}
