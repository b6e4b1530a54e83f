{#
    persist_docs for columns on Iceberg tables made without `file_format`. dbt-spark
    writes column comments only when file_format is delta, hudi or iceberg; floe's
    tables are Iceberg by default, so without this their documented columns got no
    comment and nothing said so. dbt's validate_doc_columns (called by dbt-spark's
    persist_docs) has already warned about documented columns the table lacks and
    removed them from `column_dict`. Re-running writes the same comment: Iceberg
    commits nothing for an unchanged schema. Views keep dbt-spark's behaviour.
#}
{% macro floe__alter_column_comment(relation, column_dict) %}
    {%- set file_format = config.get('file_format', validator=validation.any[basestring]) -%}
    {%- if relation.type == 'view' or file_format not in (none, 'iceberg') -%}
        {%- do return(spark__alter_column_comment(relation, column_dict)) -%}
    {%- endif -%}
    {%- for column_name in column_dict -%}
        {%- set comment = column_dict[column_name]['description'] or '' -%}
        {%- set escaped = comment | replace('\\', '\\\\') | replace("'", "\\'") -%}
        {#- an existing column's name (validated above), backquoted: Spark still
            resolves it regardless of case unless spark.sql.caseSensitive -#}
        {%- set column = '`' ~ (column_name | replace('`', '``')) ~ '`' -%}
        {%- do run_query("alter table " ~ relation ~ " alter column " ~ column
            ~ " comment '" ~ escaped ~ "'") -%}
    {%- endfor -%}
{% endmacro %}
