{#
    The MERGE of one batch: its latest change per key (floe_cdc_latest_changes)
    against the target. Every target column is assigned: from the batch when it
    has the column, else NULL (a source column dropped upstream stays in the
    table and reads NULL for rows written since). Keys are never updated.
#}
{% macro floe_cdc_merge_sql(source, target_relation, target_columns, payload, cfg) %}
    {%- set available = payload | map(attribute='name') | map('lower') | list -%}
    {%- set keys = cfg.unique_key | map('lower') | list -%}
    {%- set assignments = [] -%}
    {%- for col in target_columns -%}
        {%- if col.name | lower in available -%}
            {%- do assignments.append((col.name, 'floe_source.' ~ adapter.quote(col.name))) -%}
        {%- else -%}
            {#- a column the source no longer sends: NULL for new rows, never dropped -#}
            {%- do assignments.append((col.name, 'cast(null as ' ~ col.dtype ~ ')')) -%}
        {%- endif -%}
    {%- endfor -%}
    merge into {{ target_relation }} as floe_target
    using (
        {{ floe_cdc_latest_changes(source, payload, cfg) }}
    ) as floe_source
    on
    {%- for k in cfg.unique_key %}
        floe_target.{{ k }} = floe_source.{{ k }}{{ ' and' if not loop.last }}
    {%- endfor %}
    when matched and floe_source.floe_cdc_action = 'delete' then delete
    when matched then update set
    {%- for name, value in assignments if name | lower not in keys %}
        {{ '' if loop.first else ',' }}floe_target.{{ adapter.quote(name) }} = {{ value }}
    {%- endfor %}
    when not matched and floe_source.floe_cdc_action = 'upsert' then insert (
    {%- for name, value in assignments %}
        {{ adapter.quote(name) }}{{ ',' if not loop.last }}
    {%- endfor %}
    ) values (
    {%- for name, value in assignments %}
        {{ value }}{{ ',' if not loop.last }}
    {%- endfor %}
    )
{% endmacro %}
