{#
    The filter a cdc model puts on its upstream raw rows: rows of batches newer
    than the last batch this table applied (`floe.cdc.watermark`, of the column
    named by `floe.cdc.watermark_column`, both recorded by the cdc strategy after
    each merge). Raw tables are append-only and stamp one `_load_seq` per batch,
    allocated under the warehouse's writer lock just before the batch commits, so
    it increases in commit order and "newer than the last applied batch" is exactly
    "not applied yet", deletes included: a watermark survives rows that a delete
    removed, a ledger kept in the rows would not (docs/reliability.md).
    A table whose watermark predates `floe.cdc.watermark_column` holds an
    `_ingested_at` timestamp: it is compared as one once, then replaced.
    Full builds (first run, --full-refresh) read every row.
#}
{% macro cdc_unapplied(column=none) %}
    {{ return(adapter.dispatch('cdc_unapplied', 'dbt')(column)) }}
{% endmacro %}

{% macro default__cdc_unapplied(column) %}
    {%- if execute and is_incremental() -%}
        {%- set props = {} -%}
        {%- for row in run_query('show tblproperties ' ~ this) -%}
            {%- do props.update({row[0]: row[1]}) -%}
        {%- endfor -%}
        {%- set mark = props.get('floe.cdc.watermark') -%}
        {%- if mark -%}
            {%- set marked = props.get('floe.cdc.watermark_column') or '_ingested_at' -%}
            {%- set compared = column or marked -%}
            {%- if modules.re.match('^-?[0-9]+$', mark) -%}
                {{ return(compared ~ ' > ' ~ mark) }}
            {%- endif -%}
            {{ return(compared ~ " > timestamp '" ~ mark | replace("\\", "") | replace("'", "") ~ "'") }}
        {%- endif -%}
    {%- endif -%}
    {{ return('true') }}
{% endmacro %}
