{#
    Relation listing used by floe.adapter.FloeAdapter.list_relations_without_caching:
    two cheap queries per schema instead of one DESCRIBE per relation.
#}
{% macro floe__show_tables(schema) %}
    {{ return(run_query('show tables in ' ~ schema)) }}
{% endmacro %}

{% macro floe__show_views(schema) %}
    {{ return(run_query('show views in ' ~ schema)) }}
{% endmacro %}
