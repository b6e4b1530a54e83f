{#
    The cdc options of the model, resolved and checked in Python
    (floe.feeds.cdc.cdc_config): its `cdc` options over the preset, its key and
    partitioning, else those of the feed it replicates, found by the one graph
    walk (floe.materialize.graph) and read by the one feed reader
    (floe.feeds.sources); the preset a feed implies is decided beside the feed
    kinds (floe.feeds.kinds.cdc).
#}
{% macro floe_cdc_config() %}
    {{ return(adapter.floe_cdc_config(
        this, floe_option('cdc', {}), config.get('unique_key'), config.get('partition_by'),
        model, graph if execute and graph is defined else none)) }}
{% endmacro %}
