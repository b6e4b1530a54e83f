{#
    The SQL of the append, insert_overwrite and merge strategies on Iceberg.

    dbt-spark writes `insert *` / `select <every table column>`, which fails as
    soon as the new rows lack a column the table keeps (a column dropped
    upstream under append_new_columns). Here columns are matched by name: such
    a column is written NULL on inserted rows and left as it is on updated
    ones, as dbt's other adapters do. Names are quoted (keywords, dashes).
#}
{% macro floe_get_incremental_sql(strategy, source, target, existing, unique_key, incremental_predicates) %}
    {%- if strategy == 'merge' -%}
        {{ return(get_merge_sql(target, source, unique_key, dest_columns=none,
            incremental_predicates=incremental_predicates)) }}
    {%- endif -%}
    {%- if strategy == 'insert_overwrite' and not existing.is_iceberg -%}
        {{ return(get_insert_overwrite_sql(source, target, existing)) }}
    {%- endif -%}
    {%- set source_names = adapter.get_columns_in_relation(source)
        | map(attribute='name') | map('lower') | list -%}
    {%- set select_list = [] -%}
    {%- for col in adapter.get_columns_in_relation(target) -%}
        {%- if col.name | lower in source_names -%}
            {%- do select_list.append(col.quoted) -%}
        {%- else -%}
            {%- do select_list.append('cast(null as ' ~ col.data_type ~ ') as ' ~ col.quoted) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if strategy == 'append' -%}
        insert into table {{ target }}
        select {{ select_list | join(', ') }} from {{ source }}
    {%- elif strategy == 'insert_overwrite' -%}
        {#- Iceberg replaces the partitions the rows touch (dynamic overwrite mode). -#}
        insert overwrite {{ target }}
        select {{ select_list | join(', ') }} from {{ source }}
    {%- else -%}
        {{ exceptions.raise_compiler_error(
            "Model " ~ this ~ ": no SQL for incremental_strategy '" ~ strategy ~ "'") }}
    {%- endif -%}
{% endmacro %}


{#
    MERGE of an incremental model's new rows on its unique_key (a column or a
    list; none or empty: every row is inserted, dbt's contract). Matched rows
    get the columns both sides have (merge_update_columns or
    merge_exclude_columns narrow them); unmatched rows are inserted.
#}
{% macro floe__get_merge_sql(target, source, unique_key, dest_columns, incremental_predicates=none) %}
    {%- set predicates = [] if incremental_predicates is none else [] + incremental_predicates -%}
    {%- set keys = [unique_key] if unique_key is string else (unique_key or []) -%}
    {%- for key in keys if key -%}
        {%- do predicates.append('DBT_INTERNAL_SOURCE.' ~ key ~ ' = DBT_INTERNAL_DEST.' ~ key) -%}
    {%- endfor -%}
    {%- if not (keys | select | list) -%}
        {%- do predicates.append('false') -%}
    {%- endif -%}
    {%- set source_names = adapter.get_columns_in_relation(source)
        | map(attribute='name') | map('lower') | list -%}
    {%- set shared = [] -%}
    {%- for col in adapter.get_columns_in_relation(target) if col.name | lower in source_names -%}
        {%- do shared.append(col) -%}
    {%- endfor -%}
    {%- set update_columns = floe_merge_update_columns(shared) -%}
    {%- set sql_header = config.get('sql_header', none) -%}
    {{ sql_header if sql_header is not none }}
    merge into {{ target }} as DBT_INTERNAL_DEST
    using {{ source }} as DBT_INTERNAL_SOURCE
    on {{ predicates | join(' and ') }}
    {%- if update_columns %}
    when matched then update set
        {%- for col in update_columns %}
        DBT_INTERNAL_DEST.{{ col.quoted }} = DBT_INTERNAL_SOURCE.{{ col.quoted }}{{ ',' if not loop.last }}
        {%- endfor %}
    {%- endif %}
    when not matched then insert ({{ shared | map(attribute='quoted') | join(', ') }})
    values (
        {%- for col in shared -%}
        DBT_INTERNAL_SOURCE.{{ col.quoted }}{{ ', ' if not loop.last }}
        {%- endfor -%}
    )
{% endmacro %}


{# The columns a matched row gets: all shared ones, or merge_update_columns, or all but merge_exclude_columns. #}
{% macro floe_merge_update_columns(columns) %}
    {%- set only = config.get('merge_update_columns') -%}
    {%- set excluded = config.get('merge_exclude_columns') -%}
    {%- if only and excluded -%}
        {{ exceptions.raise_compiler_error(
            "Model " ~ this ~ ": set merge_update_columns or merge_exclude_columns, not both") }}
    {%- endif -%}
    {%- set wanted = (only or []) | map('lower') | list -%}
    {%- set unwanted = (excluded or []) | map('lower') | list -%}
    {%- set chosen = [] -%}
    {%- for col in columns -%}
        {%- set name = col.name | lower -%}
        {%- if (not only or name in wanted) and name not in unwanted -%}
            {%- do chosen.append(col) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(chosen) }}
{% endmacro %}
