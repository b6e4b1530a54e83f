{#
    The feed a model replicates (docs/feeds.md): the one feed source found by
    walking its inputs through views, ephemerals and raw feed models, or none.
    Its declaration (meta.floe: kind, key, partition_by, op_column, ordering) is
    what a cdc mart defaults to, so a table's key and partitioning are declared
    once, on the feed, as the seeds' table-config entry was.
#}
{% macro floe_upstream_feed(node=none) %}
    {%- set start = node if node is not none else model -%}
    {%- if graph is not defined or not graph -%}{{ return(none) }}{%- endif -%}
    {%- set found = [] -%}
    {%- set seen = [] -%}
    {%- set todo = ((start.get('depends_on') or {}).get('nodes') or []) | list -%}
    {%- for _ in range(50) if todo -%}
        {%- set uid = todo.pop(0) -%}
        {%- if uid not in seen -%}
            {%- do seen.append(uid) -%}
            {%- set source = (graph.get('sources') or {}).get(uid) -%}
            {%- set parent = (graph.get('nodes') or {}).get(uid) -%}
            {%- if source is not none -%}
                {%- set meta = {} -%}
                {%- do meta.update((source.source_meta or {}).get('floe') or {}) -%}
                {%- do meta.update((source.meta or {}).get('floe') or {}) -%}
                {%- do meta.update(((source.get('config') or {}).get('meta') or {}).get('floe') or {}) -%}
                {%- if meta -%}
                    {%- do meta.update({'id': source.source_name ~ '.' ~ source.name}) -%}
                    {%- do found.append(meta) -%}
                {%- endif -%}
            {%- elif parent is not none and parent.resource_type == 'model'
                and (parent.config.materialized in ['view', 'ephemeral']
                     or parent.config.schema == 'raw') -%}
                {%- do todo.extend((parent.get('depends_on') or {}).get('nodes') or []) -%}
            {%- endif -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(found[0] if found | length == 1 else none) }}
{% endmacro %}


{#
    A cdc model's key, partitioning and preset: its own config when set, else its
    feed's declaration (key, partition_by; preset from the feed's kind and op column).
#}
{% macro floe_cdc_feed_defaults() %}
    {%- set feed = floe_upstream_feed() if execute else none -%}
    {%- set key = config.get('unique_key') -%}
    {%- set partition_by = config.get('partition_by') -%}
    {%- set preset = none -%}
    {%- if feed is not none -%}
        {%- if not key -%}{%- set key = feed.get('key') -%}{%- endif -%}
        {%- if not partition_by -%}{%- set partition_by = feed.get('partition_by') -%}{%- endif -%}
        {%- if feed.get('kind') == 'dms' -%}{%- set preset = 'dms' -%}
        {%- elif feed.get('kind') == 'flagged_csv' -%}{%- set preset = 'flag' -%}
        {%- elif feed.get('op_column') == '__op' -%}{%- set preset = 'debezium' -%}
        {%- endif -%}
    {%- endif -%}
    {{ return({
        'unique_key': key,
        'partition_by': [partition_by] if partition_by is string else partition_by,
        'preset': preset,
        'feed': feed.id if feed is not none else none}) }}
{% endmacro %}
