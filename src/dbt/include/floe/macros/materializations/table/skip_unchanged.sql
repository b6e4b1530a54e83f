{% macro floe_table_property(relation, key) %}
    {%- set rows = run_query("show tblproperties " ~ relation ~ " ('" ~ key ~ "')") -%}
    {{ return(rows[0][1] if rows and rows | length > 0 and rows[0] | length > 1 else none) }}
{% endmacro %}


{% macro floe_upstream_tables(node) %}
    {#- The tables (schema.identifier) node reads, through views and ephemerals,
        sorted: the one graph walk (floe.materialize.graph). -#}
    {{ return(adapter.floe_upstream_tables(node, graph)) }}
{% endmacro %}


{% macro floe_input_fingerprint() %}
    {%- set parts = [compiled_code, config.get('partition_by') | string,
                     floe_table_properties() | string] -%}
    {%- for table in floe_upstream_tables(model) -%}
        {#- In an environment, what a read sees: the branch where the table has it. -#}
        {%- set snap = run_query("select snapshot_id from " ~ table ~ ".refs where name in ('main', '"
            ~ floe_env_branch() ~ "') order by name = 'main' limit 1") -%}
        {%- do parts.append(table ~ '@' ~ (snap[0][0] if snap and snap | length > 0 else 'empty')) -%}
    {%- endfor -%}
    {{ return(local_md5(parts | join('\n'))) }}
{% endmacro %}


{#- The memo name of a table model's "same inputs, no rebuild" (kind `tables` in
    floe.runtime.settled): the table, and the environment's branch when built in one. -#}
{% macro floe_table_memo_name(relation, branch) %}
    {#- schema.identifier, unquoted whatever the quoting config: a file name -#}
    {{ return(relation.schema ~ '.' ~ relation.identifier ~ ('.' ~ branch if branch else '')) }}
{% endmacro %}
