{#
    CREATE TABLE AS of an scd2 table, with floe's Iceberg table properties:
    from the versions of every pending load (floe_scd2_versions_sql without a
    table: all inserts, surrogate keys 1.. by load then key), or empty with the
    model's columns when nothing has landed (`versions` none).
#}
{% macro floe_scd2_create_sql(relation, source, columns, cfg, versions=none) %}
    create table {{ relation }}
    using iceberg
    {{ partition_cols(label="partitioned by") }}
    tblproperties (
    {%- for k, v in floe_table_properties().items() %}
        {{ floe_string_literal(k) }} = {{ floe_string_literal(v) }}{{ ',' if not loop.last }}
    {%- endfor %}
    )
    as select
    {%- if versions is none %}
        cast(null as bigint) as {{ cfg.sk }},
        {%- for c in columns.data %}
        {{ c }},
        {%- endfor %}
        cast(null as date) as {{ cfg.valid_from }},
        cast(null as date) as {{ cfg.valid_to }}
    from {{ source }}
    where false
    {%- else %}
        s._scd2_sk as {{ cfg.sk }},
        {%- for c in columns.data %}
        s.{{ c }},
        {%- endfor %}
        s._scd2_valid_from as {{ cfg.valid_from }},
        s._scd2_valid_to as {{ cfg.valid_to }}
    from {{ versions }} as s
    where s._scd2_row = 'insert'
    {%- endif %}
{% endmacro %}
