{# CREATE TABLE AS for an scd2 table, with floe's Iceberg table properties. #}
{% macro floe_scd2_create_sql(relation, src_view, columns, cfg, eff=none) %}
    {#- Empty (eff none), or the first load itself: one CTAS, no MERGE of N inserts. -#}
    create table {{ relation }}
    using iceberg
    {{ partition_cols(label="partitioned by") }}
    tblproperties (
    {%- for k, v in floe_table_properties().items() %}
        {{ floe_string_literal(k) }} = {{ floe_string_literal(v) }}{{ ',' if not loop.last }}
    {%- endfor %}
    )
    as select
    {%- if eff is none %}
        cast(null as bigint) as {{ cfg.sk }},
    {%- else %}
        cast(row_number() over (order by {{ cfg.key_cols | join(', ') }}) as bigint)
            as {{ cfg.sk }},
    {%- endif %}
        {%- for c in columns.data %}
        {{ c }},
        {%- endfor %}
        {{ "cast(null as date)" if eff is none else "date'" ~ eff ~ "'" }} as {{ cfg.valid_from }},
        {{ "cast(null as date)" if eff is none else "date'" ~ cfg.sentinel ~ "'" }} as {{ cfg.valid_to }}
    from {{ src_view }}
    {%- if eff is none %}
    where false
    {%- elif columns.flags_deletes %}
    where not coalesce(_scd2_deleted, false)
    {%- endif %}
{% endmacro %}
