{#
    Landed feeds (docs/feeds.md): a dbt source whose config.meta.floe declares a
    feed is read by a raw Python model with `return dbt.source("<source>", "<feed>")`.
    floe's Python materialization hands the model a loader that ingests the feed's
    new landed files for such a source (floe.feeds.raw_models.feed_loader).
#}

{#- {relation name as the compiled Python model knows it: source node} for the model's
    feed sources; the node carries the declaration (meta, columns, description). -#}
{% macro floe_feed_nodes(model) %}
    {%- set feeds = {} -%}
    {%- for src in model.sources -%}
        {%- for node in graph.sources.values()
            if node.source_name == src[0] and node.name == src[1] -%}
            {%- set table_meta = (node.get('config') or {}).get('meta') or {} -%}
            {%- if 'floe' in (node.meta or {}) or 'floe' in table_meta
                or 'floe' in (node.source_meta or {}) -%}
                {%- set columns = [] -%}
                {%- for column in (node.columns or {}).values() -%}
                    {%- do columns.append({
                        'name': column.name,
                        'data_type': column.data_type,
                        'description': column.description}) -%}
                {%- endfor -%}
                {%- do feeds.update({resolve_model_name(source(src[0], src[1])): {
                    'source_name': node.source_name,
                    'name': node.name,
                    'description': node.description,
                    'meta': node.meta or {},
                    'config': {'meta': table_meta},
                    'source_meta': node.source_meta or {},
                    'columns': columns}}) -%}
            {%- endif -%}
        {%- endfor -%}
    {%- endfor -%}
    {{ return(feeds) }}
{% endmacro %}


{#
    Post-hook of the raw models (dbt_project.yml): after the new rows are committed,
    every file of the model's feed must add up (records in = rows in raw.<feed> +
    rows in raw.quarantine), counted from the tables. Renders no SQL.
#}
{% macro floe_reconcile_feed() %}
    {%- if execute and model.language == 'python' -%}
        {%- set nodes = floe_feed_nodes(model).values() | list -%}
        {%- if nodes | length > 0 -%}
            {%- do adapter.floe_reconcile_feeds(nodes) -%}
        {%- endif -%}
    {%- endif -%}
{% endmacro %}


{#
    A raw Python model that reads exactly one source (a feed) is named after it:
    `raw_streams__ventilator` builds `raw.ventilator`. Any other node: dbt's rule.
#}
{% macro floe__generate_alias_name(custom_alias_name=none, node=none) -%}
    {%- if custom_alias_name -%}
        {{ custom_alias_name | trim }}
    {%- elif node is not none and node.resource_type == 'model'
        and node.language == 'python' and node.config.schema == 'raw'
        and node.sources | length == 1 and node.refs | length == 0 -%}
        {{ node.sources[0][1] }}
    {%- else -%}
        {{ default__generate_alias_name(custom_alias_name, node) }}
    {%- endif -%}
{%- endmacro %}
