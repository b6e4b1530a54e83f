{#
    Iceberg table properties of a model: floe's defaults, then the model's
    options, then its `tblproperties` config (which wins).

    Defaults: format-version 2 (row-level deletes for MERGE/DELETE need it),
    copy-on-write for merge, update and delete (reads never merge delete files), and
    write.wap.enabled, so a build in an environment (FLOE_ENV, docs/envs.md) writes
    the table's branch with no property commit at `floe env create`. Without a
    spark.wap.branch set, writes go to main as usual.
    Options (model config or `meta`):
        write_mode         copy-on-write | merge-on-read (delete-heavy tables:
                           MERGE writes delete files instead of rewriting data
                           files; compaction folds them back, see floe maintain)
        target_file_size_bytes    write.target-file-size-bytes
        maintenance        the table's maintenance policy, stored on the table
                           so `floe maintain` needs no dbt project to find it:
                           keep_snapshots        history.expire.min-snapshots-to-keep
                           max_snapshot_age_days history.expire.max-snapshot-age-ms
                           compact_min_files     floe.maintain.compact-min-files
                           orphan_age_days       floe.maintain.orphan-age-days
#}
{% macro floe_table_properties() %}
    {#- parsed and checked in Python (floe.materialize.configs.TableProperties) -#}
    {{ return(adapter.floe_table_properties(this, {
        'write_mode': floe_option('write_mode'),
        'target_file_size_bytes': floe_option('target_file_size_bytes'),
        'maintenance': floe_option('maintenance'),
        'tblproperties': config.get('tblproperties'),
    })) }}
{% endmacro %}


{#
    SQL models' CREATE TABLE ... TBLPROPERTIES: floe's defaults for Iceberg
    tables. A model without file_format gets them too: floe's catalog creates
    Iceberg tables whatever the USING clause says.
#}
{% macro floe__tblproperties_clause() -%}
    {%- if config.get('file_format') in (none, 'iceberg') -%}
    tblproperties (
        {%- for key, value in floe_table_properties().items() %}
        {{ floe_string_literal(key) }} = {{ floe_string_literal(value) }}{{ ',' if not loop.last }}
        {%- endfor %}
    )
    {%- else -%}
        {{ spark__tblproperties_clause() }}
    {%- endif -%}
{%- endmacro %}


{#
    An existing table follows its model's properties: changed keys are set
    again (a metadata update, no snapshot), so switching write_mode or the
    maintenance policy in YAML needs no full refresh. Nothing is unset.
#}
{% macro floe_sync_table_properties(relation) %}
    {%- set current = {} -%}
    {%- for row in run_query('show tblproperties ' ~ relation) -%}
        {%- do current.update({row[0]: row[1]}) -%}
    {%- endfor -%}
    {%- set changed = {} -%}
    {%- for key, value in floe_table_properties().items() -%}
        {%- if key != 'format-version' and current.get(key) != value | string -%}
            {%- do changed.update({key: value}) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if changed -%}
        {%- call statement('sync_table_properties') -%}
            alter table {{ relation }} set tblproperties (
            {%- for key, value in changed.items() %}
                {{ floe_string_literal(key) }} = {{ floe_string_literal(value) }}{{ ',' if not loop.last }}
            {%- endfor %}
            )
        {%- endcall -%}
    {%- endif -%}
    {%- do floe_apply_sort_order(relation, current) -%}
{% endmacro %}


{#
    The `/* floe:runtime_filter */` mark for a MERGE into this model's table when
    it is merge-on-read (docs/decisions/0020-runtime-filtered-merges.md): there
    the MERGE joins the table's rows to the batch by a right outer join, whose
    table side Spark's runtime filter prunes by the batch's keys. Copy-on-write
    joins by a full outer join that keeps every row of the files it rewrites, and
    the file filter it plans first wants the broadcast join the mark's settings
    turn off, so it gets no mark.
#}
{% macro floe_runtime_filter_mark() -%}
    {%- if floe_table_properties()['write.merge.mode'] == 'merge-on-read' -%}
    /* floe:runtime_filter */
    {%- endif -%}
{%- endmacro %}
