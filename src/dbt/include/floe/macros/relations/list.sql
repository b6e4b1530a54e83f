{# Relation listing used by floe.adapter.FloeAdapter.list_relations_without_caching. #}
{% macro floe__show_tables(schema) %}
    {{ return(run_query('show tables in ' ~ schema)) }}
{% endmacro %}

{% macro floe__show_views(schema) %}
    {{ return(run_query('show views in ' ~ schema)) }}
{% endmacro %}

{#
    Iceberg tables are dropped with PURGE so a full refresh leaves no data files
    behind (a plain DROP only forgets the table in the catalog).
#}
{% macro floe__drop_relation(relation) -%}
    {% call statement('drop_relation', auto_begin=False) -%}
        {%- if relation.type == 'view' -%}
            drop view if exists {{ relation }}
        {%- else -%}
            drop table if exists {{ relation }} purge
        {%- endif -%}
    {%- endcall %}
{% endmacro %}
