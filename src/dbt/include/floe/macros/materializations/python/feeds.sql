{#
    Landed feeds (docs/feeds.md): a dbt source whose config.meta.floe declares a
    feed is read by a raw Python model with `return dbt.source("<source>", "<feed>")`.
    floe's Python materialization hands the model a loader that ingests the feed's
    new landed files for such a source (floe.feeds.raw_models.feed_loader).
#}

{#- {relation name as the compiled Python model knows it: feed declaration} for the
    model's feed sources. The declaration is found in dbt's graph and validated by the
    one feed reader (floe.feeds.sources.feed_node, through adapter.floe_feed_node); only
    the relation name dbt's source() resolves to is Jinja's to say. -#}
{% macro floe_feed_nodes(model) %}
    {%- set feeds = {} -%}
    {%- for src in model.sources -%}
        {%- set node = adapter.floe_feed_node(src[0], src[1], graph) -%}
        {%- if node is not none -%}
            {%- do feeds.update({resolve_model_name(source(src[0], src[1])): node}) -%}
        {%- endif -%}
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
