{% macro floe_cdc_presets() %}
    {{ return({
        'dms': {
            'op_column': 'Op', 'delete_ops': ['D'], 'upsert_ops': ['I', 'U'],
            'null_op': 'upsert', 'delete_condition': none,
            'order_by': ['last_update_time', '_source_file', '_row_in_file'],
        },
        'debezium': {
            'op_column': '__op', 'delete_ops': ['d'], 'upsert_ops': ['c', 'u', 'r'],
            'null_op': 'fail',
            'delete_condition': "lower(cast(__deleted as string)) = 'true'",
            'order_by': ['__source_ts_ms', '_source_file', '_row_in_file'],
        },
        'flag': {
            'op_column': 'op', 'delete_ops': ['D'], 'upsert_ops': ['I', 'U'],
            'null_op': 'upsert', 'delete_condition': none,
            'order_by': ['_load_date', '_source_file', '_row_in_file'],
        },
    }) }}
{% endmacro %}


{% macro floe_cdc_config() %}
    {%- set options = floe_option('cdc', {}) -%}
    {%- set defaults = floe_cdc_feed_defaults() -%}
    {%- set preset_name = options.get('preset') or defaults.preset or 'dms' -%}
    {%- set presets = floe_cdc_presets() -%}
    {%- if preset_name not in presets -%}
        {{ exceptions.raise_compiler_error(
            "Model " ~ this ~ ": cdc preset '" ~ preset_name ~ "' is not one of "
            ~ presets.keys() | list | join(', ')) }}
    {%- endif -%}
    {%- set cfg = {} -%}
    {%- do cfg.update(presets[preset_name]) -%}
    {%- do cfg.update({'exclude_columns': [], 'watermark_column': '_load_seq',
        'split': false, 'key_list_max': 1000, 'buckets': none}) -%}
    {%- for key, value in options.items() if key != 'preset' -%}
        {%- if key not in cfg -%}
            {{ exceptions.raise_compiler_error(
                "Model " ~ this ~ ": unknown cdc option '" ~ key ~ "'; known: "
                ~ cfg.keys() | list | join(', ')) }}
        {%- endif -%}
        {%- do cfg.update({key: value}) -%}
    {%- endfor -%}
    {%- if cfg.buckets is not none and not (cfg.buckets is number and cfg.buckets is not boolean and cfg.buckets > 0) -%}
        {{ exceptions.raise_compiler_error(
            "Model " ~ this ~ ": cdc.buckets must be a positive number of buckets, got '"
            ~ cfg.buckets ~ "'") }}
    {%- endif -%}
    {%- if not (cfg.key_list_max is number and cfg.key_list_max is not boolean
        and cfg.key_list_max >= 0) -%}
        {{ exceptions.raise_compiler_error(
            "Model " ~ this ~ ": cdc.key_list_max must be a number >= 0 (0: never list keys), got '"
            ~ cfg.key_list_max ~ "'") }}
    {%- endif -%}
    {%- if cfg.split not in (true, false) -%}
        {{ exceptions.raise_compiler_error(
            "Model " ~ this ~ ": cdc.split must be true or false, got '" ~ cfg.split ~ "'") }}
    {%- endif -%}
    {%- set unique_key = defaults.unique_key -%}
    {%- if not unique_key -%}
        {{ exceptions.raise_compiler_error(
            "Model " ~ this ~ ": incremental_strategy 'cdc' needs a unique_key: set it on "
            ~ "the model, or declare `key` on the feed it replicates (meta.floe, docs/feeds.md)") }}
    {%- endif -%}
    {%- do cfg.update({
        'unique_key': [unique_key] if unique_key is string else unique_key,
        'partition_by': defaults.partition_by,
        'feed': defaults.feed,
        'preset': preset_name}) -%}
    {{ return(cfg) }}
{% endmacro %}
