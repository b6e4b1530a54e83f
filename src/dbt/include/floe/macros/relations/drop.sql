{#
    Iceberg tables are dropped with their files so a full refresh leaves no data
    files behind (a plain DROP only forgets the table in the catalog). The files are
    deleted by the driver (floe.adapter.FloeAdapter.floe_drop_table), not by the
    Spark action `drop table ... purge` runs.
#}
{% macro floe__drop_relation(relation) -%}
    {%- if relation.type == 'view' -%}
        {% call statement('drop_relation', auto_begin=False) -%}
            drop view if exists {{ relation }}
        {%- endcall %}
    {%- else -%}
        {%- do adapter.floe_drop_table(relation) -%}
    {%- endif -%}
{% endmacro %}


{#
    `drop schema ... cascade` on an Iceberg catalog fails while the namespace
    holds tables (Iceberg's catalogs ignore CASCADE and raise
    NamespaceNotEmptyException): drop its relations first, then the namespace.
    A schema that does not exist is nothing to drop.
#}
{% macro floe__drop_schema(relation) -%}
    {%- for member in adapter.floe_relations_in_schema(relation) -%}
        {%- do floe__drop_relation(member) -%}
    {%- endfor -%}
    {% call statement('drop_schema') -%}
        drop schema if exists {{ relation.without_identifier() }} cascade
    {%- endcall %}
{% endmacro %}
