{#
    Schema evolution of an incremental Iceberg table against its new rows.

    on_schema_change (floe's default append_new_columns, see incremental.sql):
        ignore              nothing changes; the write fails if columns differ
        fail                any difference fails the run (dbt's rule)
        append_new_columns  new columns are added; none is dropped
        sync_all_columns    new columns are added and columns the rows no
                            longer have are DROPPED (an explicit choice)
    Under append_new_columns and sync_all_columns, column types are reconciled
    first, before anything changes: a type that fits the table's is left
    alone, one Iceberg can widen the column to is applied with ALTER COLUMN,
    anything else fails naming table, column and both types (floe_type_change).
#}
{% macro floe_schema_evolve(on_schema_change, source_relation, target_relation) %}
    {%- if on_schema_change in ('append_new_columns', 'sync_all_columns') -%}
        {%- do floe_reconcile_column_types(source_relation, target_relation) -%}
    {%- endif -%}
    {%- do process_schema_changes(on_schema_change, source_relation, target_relation) -%}
{% endmacro %}


{% macro floe_reconcile_column_types(source_relation, target_relation) %}
    {%- set target_types = {} -%}
    {%- for col in adapter.get_columns_in_relation(target_relation) -%}
        {%- do target_types.update({col.name | lower: col.dtype | lower | replace(' ', '')}) -%}
    {%- endfor -%}
    {%- for col in adapter.get_columns_in_relation(source_relation) -%}
        {%- set old = target_types.get(col.name | lower) -%}
        {%- if old is not none -%}
            {%- do floe_apply_type_change(target_relation, col.name, old,
                col.dtype | lower | replace(' ', '')) -%}
        {%- endif -%}
    {%- endfor -%}
{% endmacro %}


{# One column of `relation` from type `old` to `new`: nothing, a widening, or an error. #}
{% macro floe_apply_type_change(relation, column_name, old, new) %}
    {%- set change = floe_type_change(old, new) -%}
    {%- if change == 'widen' -%}
        {{ log(this ~ ': widening ' ~ column_name ~ ' from ' ~ old ~ ' to ' ~ new, info=True) }}
        {%- call statement('widen_' ~ column_name) -%}
            alter table {{ relation }} alter column {{ adapter.quote(column_name) }} type {{ new }}
        {%- endcall -%}
    {%- elif change == 'refuse' -%}
        {{ exceptions.raise_compiler_error(
            "Table " ~ relation ~ ": column " ~ column_name ~ " changes type from "
            ~ old ~ " to " ~ new ~ ". Iceberg widens only int -> bigint, "
            ~ "float -> double and decimal(P,S) -> decimal(P2,S) with P2 > P. Cast "
            ~ column_name ~ " to " ~ old ~ " in the model, add a new column, or rebuild "
            ~ "the table with --full-refresh.") }}
    {%- endif -%}
{% endmacro %}


{#
    dbt's sync_all_columns changes a column's type through alter_column_type;
    on an Iceberg table floe's rule applies instead (no rewrite through a
    temporary column, no narrowing).
#}
{% macro floe__alter_column_type(relation, column_name, new_column_type) %}
    {%- if not relation.is_iceberg -%}
        {{ return(default__alter_column_type(relation, column_name, new_column_type)) }}
    {%- endif -%}
    {%- set old = none -%}
    {%- for col in adapter.get_columns_in_relation(relation)
        if col.name | lower == column_name | lower -%}
        {%- set old = col.dtype | lower | replace(' ', '') -%}
        {%- do floe_apply_type_change(relation, col.name, old,
            new_column_type | lower | replace(' ', '')) -%}
    {%- endfor -%}
{% endmacro %}


{#
    Iceberg drops columns as a metadata change (data files keep them, reads
    skip them), so sync_all_columns works on Iceberg tables; dbt-spark refuses
    it for every format. Other formats keep dbt-spark's behaviour.
#}
{% macro floe__alter_relation_add_remove_columns(relation, add_columns, remove_columns) %}
    {%- if not relation.is_iceberg -%}
        {{ return(spark__alter_relation_add_remove_columns(relation, add_columns, remove_columns)) }}
    {%- endif -%}
    {%- if add_columns -%}
        {%- call statement('add_columns') -%}
            alter table {{ relation }} add columns (
            {%- for column in add_columns %}
                {{ column.quoted }} {{ column.data_type }}{{ ',' if not loop.last }}
            {%- endfor %}
            )
        {%- endcall -%}
    {%- endif -%}
    {%- if remove_columns -%}
        {{ log(this ~ ': dropping columns ' ~ remove_columns | map(attribute='name') | join(', ')
               ~ ' (on_schema_change: sync_all_columns)', info=True) }}
        {%- call statement('drop_columns') -%}
            alter table {{ relation }} drop columns (
            {%- for column in remove_columns %}
                {{ column.quoted }}{{ ',' if not loop.last }}
            {%- endfor %}
            )
        {%- endcall -%}
    {%- endif -%}
{% endmacro %}
