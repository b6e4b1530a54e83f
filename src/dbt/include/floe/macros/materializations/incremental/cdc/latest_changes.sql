{# Columns of the batch that belong in the target table. #}
{% macro floe_cdc_payload_columns(source_columns, cfg) %}
    {%- set excluded = [cfg.op_column | lower] -%}
    {%- for c in cfg.exclude_columns -%}{%- do excluded.append(c | lower) -%}{%- endfor -%}
    {%- set payload = [] -%}
    {%- for col in source_columns -%}
        {%- if not col.name.startswith('_') and col.name | lower not in excluded -%}
            {%- do payload.append(col) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(payload) }}
{% endmacro %}


{#
    The batch reduced to one row per key (its latest change) with the action it
    asks for, `floe_cdc_action` = 'delete' | 'upsert'. Rows with a NULL key, an
    unknown op, or a latest change tied with another on every order column fail
    the statement. With a
    `watermark` column, `floe_cdc_watermark` is its greatest value over the
    key's changes (their max over the rows is the batch's), computed in the
    key's window: no second pass over the batch.
#}
{% macro floe_cdc_latest_changes(source, payload, cfg, watermark=none) %}
    {%- set keys = cfg.unique_key -%}
    {%- set deletes = '(' ~ cfg.op_column ~ ' in (' ~ floe_quote_list(cfg.delete_ops) ~ ')' -%}
    {%- if cfg.delete_condition -%}
        {%- set deletes = deletes ~ ' or coalesce(' ~ cfg.delete_condition ~ ', false)' -%}
    {%- endif -%}
    {%- set deletes = deletes ~ ')' -%}
    {#- Messages are escaped literals: they quote config values (op values, columns). -#}
    {%- set where = this ~ ' (cdc): ' -%}
    {%- set no_key = where ~ 'a change without its key (' ~ keys | join(', ') ~ ')' -%}
    {%- set tie = where ~ 'two or more changes of one key tie on every order column ('
        ~ cfg.order_by | join(', ') ~ '); add a tie-breaker to cdc.order_by' -%}
    {%- set known_ops = ' (delete: ' ~ cfg.delete_ops | join('/')
        ~ ', upsert: ' ~ cfg.upsert_ops | join('/') ~ ')' -%}
    {%- set latest_first -%}
        partition by {{ keys | join(', ') }}
        order by
        {%- for c in cfg.order_by %}
            {{ c }} desc nulls last{{ ',' if not loop.last }}
        {%- endfor %}
    {%- endset %}
    select
        {%- for col in payload %}
        {{ adapter.quote(col.name) }},
        {%- endfor %}
        case
            when {{ keys | join(' is null or ') }} is null
                then raise_error({{ floe_string_literal(no_key) }})
            when floe_cdc_tied
                then raise_error({{ floe_string_literal(tie) }})
            when {{ deletes }} then 'delete'
            when {{ cfg.op_column }} in ({{ floe_quote_list(cfg.upsert_ops) }}) then 'upsert'
            {%- if cfg.null_op == 'upsert' %}
            when {{ cfg.op_column }} is null then 'upsert'
            {%- endif %}
            else raise_error(concat({{ floe_string_literal(where ~ 'unknown op ') }},
                coalesce(cast({{ cfg.op_column }} as string), 'NULL'),
                {{ floe_string_literal(known_ops) }}))
        end as floe_cdc_action
        {%- if watermark %},
        floe_cdc_watermark
        {%- endif %}
    from (
        select
            *,
            row_number() over ({{ latest_first }}) as floe_cdc_rank,
            {%- if watermark %}
            max({{ watermark }}) over (
                partition by {{ keys | join(', ') }}
            ) as floe_cdc_watermark,
            {%- endif %}
            {#- Ties sort together, so the latest change ties when the next one in
                the same order equals it on every order column (NULL equal to NULL,
                as the key's partitions group them). One window order for the rank,
                the tie and the watermark: one sort of the batch, not two
                (docs/decisions/0054-cdc-merge-near-a-quarter-of-a-rebuild.md). #}
            coalesce(lead(true) over ({{ latest_first }}), false)
            {%- for c in cfg.order_by %}
                and lead({{ c }}) over ({{ latest_first }}) <=> {{ c }}
            {%- endfor %} as floe_cdc_tied
        from {{ source }}
    ) as floe_cdc_ranked
    where floe_cdc_rank = 1
{% endmacro %}
