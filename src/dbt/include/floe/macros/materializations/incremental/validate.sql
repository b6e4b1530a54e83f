{#
    Config checks of an incremental model, before anything is written, made in
    Python (floe.materialize.configs).

    floe_validate_incremental: the strategy is known, and `insert_overwrite`
    has a partition_by (without one it would replace the whole Iceberg table
    on every run). `merge` without a unique_key is dbt's contract for an
    append through MERGE and is allowed; `cdc` needs a key, its own or its
    feed's (checked by floe_cdc_config, which knows the feed).
#}
{% macro floe_validate_incremental(strategy, unique_key, partition_by) %}
    {%- do adapter.floe_validate_incremental(this, strategy, partition_by) -%}
{% endmacro %}


{#
    The unique_key columns exist among `columns` (the model's compiled
    columns: its new rows' relation, empty or not), so a misspelled key fails
    the run that has it instead of passing while no rows arrive. Case and
    backticks are ignored, as Spark resolves columns.
#}
{% macro floe_validate_unique_key(unique_key, columns) %}
    {%- do adapter.floe_validate_unique_key(this, unique_key, columns) -%}
{% endmacro %}
