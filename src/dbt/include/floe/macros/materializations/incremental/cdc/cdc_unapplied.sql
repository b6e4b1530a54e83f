{#
    The filter a cdc model puts on its upstream raw rows: rows of batches newer
    than the last batch this table applied (`floe.cdc.watermark`, recorded by
    the cdc strategy after each merge). Raw tables are append-only and stamp
    one `_ingested_at` per batch, so "newer than the last applied batch" is
    exactly "not applied yet", deletes included: a watermark survives rows
    that a delete removed, a ledger kept in the rows would not.
    Full builds (first run, --full-refresh) read every row.
#}
{% macro cdc_unapplied(column='_ingested_at') %}
    {{ return(adapter.dispatch('cdc_unapplied', 'dbt')(column)) }}
{% endmacro %}

{% macro default__cdc_unapplied(column) %}
    {%- if execute and is_incremental() -%}
        {%- for row in run_query('show tblproperties ' ~ this)
            if row[0] == 'floe.cdc.watermark' -%}
            {%- set mark = row[1] -%}
            {%- if mark -%}{{ return(column ~ " > timestamp '" ~ mark ~ "'") }}{%- endif -%}
        {%- endfor -%}
    {%- endif -%}
    {{ return('true') }}
{% endmacro %}
