{#
    Config checks of an incremental model, before anything is written.

    floe_validate_incremental: the strategy is known, and `insert_overwrite`
    has a partition_by (without one it would replace the whole Iceberg table
    on every run). `merge` without a unique_key is dbt's contract for an
    append through MERGE and is allowed; `cdc` needs a key, its own or its
    feed's (checked by floe_cdc_config, which knows the feed).
#}
{% macro floe_validate_incremental(strategy, unique_key, partition_by) %}
    {%- set allowed = ['append', 'merge', 'insert_overwrite', 'cdc', 'microbatch'] -%}
    {%- if strategy not in allowed -%}
        {#- dbt's own wording (dbt-spark's validate.sql), with the model named -#}
        {{ exceptions.raise_compiler_error(
            "Invalid incremental strategy provided: " ~ strategy ~ " (model " ~ this
            ~ ")\n    Expected one of: '" ~ allowed | join("', '") ~ "'") }}
    {%- endif -%}
    {%- if strategy == 'insert_overwrite' and not partition_by -%}
        {{ exceptions.raise_compiler_error(
            "Model " ~ this ~ ": incremental_strategy 'insert_overwrite' without "
            ~ "partition_by would replace the whole Iceberg table on every run. "
            ~ "Set partition_by, or use 'merge' with a unique_key.") }}
    {%- endif -%}
    {#- cdc: the key may come from the model's feed; floe_cdc_config checks it. -#}
{% endmacro %}


{#
    The unique_key columns exist among `columns` (the model's compiled
    columns: its new rows' relation, empty or not), so a misspelled key fails
    the run that has it instead of passing while no rows arrive. Case and
    backticks are ignored, as Spark resolves columns.
#}
{% macro floe_validate_unique_key(unique_key, columns) %}
    {%- if not unique_key -%}{{ return(none) }}{%- endif -%}
    {%- set keys = [unique_key] if unique_key is string else unique_key -%}
    {%- set names = [] -%}
    {%- for col in columns -%}
        {%- do names.append((col.name if col.name is defined else col) | lower) -%}
    {%- endfor -%}
    {%- set missing = [] -%}
    {%- for key in keys -%}
        {%- if key | replace('`', '') | trim | lower not in names -%}
            {%- do missing.append(key) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if missing -%}
        {{ exceptions.raise_compiler_error(
            "Model " ~ this ~ ": unique_key column" ~ ('s ' if missing | length > 1 else ' ')
            ~ missing | join(', ') ~ " not in the model's columns ("
            ~ names | join(', ') ~ "). Fix unique_key in the model's config.") }}
    {%- endif -%}
{% endmacro %}
