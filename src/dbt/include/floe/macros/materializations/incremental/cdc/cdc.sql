{#
    The `cdc` incremental strategy (SPEC §7): apply a batch of change records to
    an Iceberg table with ONE `MERGE INTO` per build.

    Per key, the latest change wins (order: `order_by`, descending). The order must
    be total within a key: two rows of one key equal on every order column fail
    the build instead of letting Spark pick one (the seeds' dedup kept both, and
    the MERGE then failed or went either way). Then:
        delete op, matched          -> DELETE
        delete op, not matched      -> nothing
        upsert op, matched          -> UPDATE every target column
        upsert op, not matched      -> INSERT (an update of a key never inserted
                                       is an upsert, not a silent drop)
    The op column, `_`-prefixed provenance columns and `exclude_columns` never
    reach the target. Target columns the batch lacks (a dropped or renamed
    source column) are set to NULL; new batch columns are added to the table;
    types widen only where Iceberg can (floe_schema_evolve).

    Options, in the model's `meta.cdc` (or a `cdc` config dict), over a preset:
        preset            dms | debezium | flag                  (default dms)
        op_column         column holding the op flag
        delete_ops        op values that delete
        upsert_ops        op values that insert-or-update
        null_op           upsert | fail: rows without an op (full loads)
        delete_condition  SQL that also marks a delete (Debezium `__deleted`)
        order_by          columns ordering changes of one key, oldest first
        exclude_columns   further columns kept out of the target
        watermark_column  batch column whose max is recorded after each merge
                          (see cdc_unapplied; default `_ingested_at`)
#}

{% macro floe_cdc_presets() %}
    {{ return({
        'dms': {
            'op_column': 'Op', 'delete_ops': ['D'], 'upsert_ops': ['I', 'U'],
            'null_op': 'upsert', 'delete_condition': none,
            'order_by': ['last_update_time', '_source_file', '_row_in_file'],
        },
        'debezium': {
            'op_column': '__op', 'delete_ops': ['d'], 'upsert_ops': ['c', 'u', 'r'],
            'null_op': 'fail',
            'delete_condition': "lower(cast(__deleted as string)) = 'true'",
            'order_by': ['__source_ts_ms', '_source_file', '_row_in_file'],
        },
        'flag': {
            'op_column': 'op', 'delete_ops': ['D'], 'upsert_ops': ['I', 'U'],
            'null_op': 'upsert', 'delete_condition': none,
            'order_by': ['_load_date', '_source_file', '_row_in_file'],
        },
    }) }}
{% endmacro %}


{# A floe model option: from the model's `meta`, else from its config. #}
{% macro floe_option(name, default=none) %}
    {%- set value = config.meta_get(name) -%}
    {%- if value is none -%}
        {%- set value = config.get(name) -%}
    {%- endif -%}
    {{ return(default if value is none else value) }}
{% endmacro %}


{% macro floe_cdc_config() %}
    {%- set options = floe_option('cdc', {}) -%}
    {%- set preset_name = options.get('preset', 'dms') -%}
    {%- set presets = floe_cdc_presets() -%}
    {%- if preset_name not in presets -%}
        {{ exceptions.raise_compiler_error(
            "Model " ~ this ~ ": cdc preset '" ~ preset_name ~ "' is not one of "
            ~ presets.keys() | list | join(', ')) }}
    {%- endif -%}
    {%- set cfg = {} -%}
    {%- do cfg.update(presets[preset_name]) -%}
    {%- do cfg.update({'exclude_columns': [], 'watermark_column': '_ingested_at'}) -%}
    {%- for key, value in options.items() if key != 'preset' -%}
        {%- if key not in cfg -%}
            {{ exceptions.raise_compiler_error(
                "Model " ~ this ~ ": unknown cdc option '" ~ key ~ "'; known: "
                ~ cfg.keys() | list | join(', ')) }}
        {%- endif -%}
        {%- do cfg.update({key: value}) -%}
    {%- endfor -%}
    {%- set unique_key = config.get('unique_key') -%}
    {%- do cfg.update({
        'unique_key': [unique_key] if unique_key is string else unique_key,
        'preset': preset_name}) -%}
    {{ return(cfg) }}
{% endmacro %}


{% macro floe_quote_list(values) -%}
    {%- for v in values -%}'{{ v | replace("'", "\\'") }}'{{ ', ' if not loop.last }}{%- endfor -%}
{%- endmacro %}


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
    unknown op, or a tie on every order column fail the statement.
#}
{% macro floe_cdc_latest_changes(source, payload, cfg) %}
    {%- set keys = cfg.unique_key -%}
    {%- set deletes = '(' ~ cfg.op_column ~ ' in (' ~ floe_quote_list(cfg.delete_ops) ~ ')' -%}
    {%- if cfg.delete_condition -%}
        {%- set deletes = deletes ~ ' or coalesce(' ~ cfg.delete_condition ~ ', false)' -%}
    {%- endif -%}
    {%- set deletes = deletes ~ ')' -%}
    {%- set where = this ~ ' (cdc): ' -%}
    select
        {%- for col in payload %}
        {{ col.name }},
        {%- endfor %}
        case
            when {{ keys | join(' is null or ') }} is null
                then raise_error('{{ where }}a change without its key ({{ keys | join(", ") }})')
            when floe_cdc_ties > 1
                then raise_error(concat('{{ where }}', floe_cdc_ties, ' changes of one key '
                    || 'tie on every order column ({{ cfg.order_by | join(", ") }}); '
                    || 'add a tie-breaker to cdc.order_by'))
            when {{ deletes }} then 'delete'
            when {{ cfg.op_column }} in ({{ floe_quote_list(cfg.upsert_ops) }}) then 'upsert'
            {%- if cfg.null_op == 'upsert' %}
            when {{ cfg.op_column }} is null then 'upsert'
            {%- endif %}
            else raise_error(concat('{{ where }}unknown op ',
                coalesce(cast({{ cfg.op_column }} as string), 'NULL'),
                ' (delete: {{ cfg.delete_ops | join("/") }}, '
                || 'upsert: {{ cfg.upsert_ops | join("/") }})'))
        end as floe_cdc_action
    from (
        select
            *,
            row_number() over (
                partition by {{ keys | join(', ') }}
                order by
                {%- for c in cfg.order_by %}
                    {{ c }} desc nulls last{{ ',' if not loop.last }}
                {%- endfor %}
            ) as floe_cdc_rank,
            count(*) over (
                partition by {{ keys | join(', ') }}, {{ cfg.order_by | join(', ') }}
            ) as floe_cdc_ties
        from {{ source }}
    ) as floe_cdc_ranked
    where floe_cdc_rank = 1
{% endmacro %}


{% macro floe_cdc_merge_sql(source, target_relation, target_columns, payload, cfg) %}
    {%- set available = payload | map(attribute='name') | map('lower') | list -%}
    {%- set keys = cfg.unique_key | map('lower') | list -%}
    {%- set assignments = [] -%}
    {%- for col in target_columns -%}
        {%- if col.name | lower in available -%}
            {%- do assignments.append((col.name, 'floe_source.' ~ col.name)) -%}
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
        {{ '' if loop.first else ',' }}floe_target.{{ name }} = {{ value }}
    {%- endfor %}
    when not matched and floe_source.floe_cdc_action = 'upsert' then insert (
    {%- for name, value in assignments %}
        {{ name }}{{ ',' if not loop.last }}
    {%- endfor %}
    ) values (
    {%- for name, value in assignments %}
        {{ value }}{{ ',' if not loop.last }}
    {%- endfor %}
    )
{% endmacro %}


{#
    The whole cdc build: first build (or full refresh) creates the table from
    the batch's upserts; later builds evolve the schema and MERGE. An empty
    batch writes nothing (no snapshot, no property change).
#}
{% macro floe_cdc_build(target_relation, existing_relation, tmp_relation, compiled_code, on_schema_change) %}
    {%- set cfg = floe_cdc_config() -%}
    {%- set full_build = existing_relation is none or existing_relation.is_view
        or should_full_refresh() -%}

    {%- call statement('create_tmp_relation') -%}
        {{ create_table_as(True, tmp_relation, compiled_code, 'sql') }}
    {%- endcall -%}
    {%- set source_columns = adapter.get_columns_in_relation(tmp_relation) -%}
    {%- set source_names = source_columns | map(attribute='name') | map('lower') | list -%}
    {%- for required in [cfg.op_column] + cfg.unique_key + cfg.order_by -%}
        {%- if required | lower not in source_names -%}
            {{ exceptions.raise_compiler_error(
                "Model " ~ this ~ " (cdc): column '" ~ required ~ "' is not in the model's "
                ~ "rows (" ~ source_names | join(', ') ~ "); check unique_key and the cdc "
                ~ "op_column/order_by options (preset " ~ cfg.preset ~ ")") }}
        {%- endif -%}
    {%- endfor -%}
    {%- set payload = floe_cdc_payload_columns(source_columns, cfg) -%}
    {%- set watermark = cfg.watermark_column if cfg.watermark_column | lower in source_names else none -%}

    {%- if floe_relation_is_empty(tmp_relation) -%}
        {{ log(this ~ ': no new changes, nothing committed', info=False) }}
        {%- call statement('main') -%}
            select 'no new rows' as floe_skipped
        {%- endcall -%}
    {%- else -%}
        {%- if watermark -%}
            {%- set mark = run_query('select cast(max(' ~ watermark ~ ') as string) from '
                ~ tmp_relation).rows[0][0] -%}
        {%- endif -%}
        {%- if full_build -%}
            {%- if existing_relation is not none -%}
                {% do adapter.drop_relation(existing_relation) %}
            {%- endif -%}
            {%- set initial -%}
                select
                {%- for col in payload %}
                    {{ col.name }}{{ ',' if not loop.last }}
                {%- endfor %}
                from ({{ floe_cdc_latest_changes(tmp_relation, payload, cfg) }}) as floe_changes
                where floe_cdc_action = 'upsert'
                {%- set sort_by = floe_option('sort_by') %}
                {%- if sort_by %}
                order by {{ (sort_by if sort_by is not string else [sort_by]) | join(', ') }}
                {%- endif %}
            {%- endset -%}
            {%- call statement('main') -%}
                {{ create_table_as(False, target_relation, initial, 'sql') }}
            {%- endcall -%}
            {%- do floe_apply_sort_order(target_relation) -%}
        {%- else -%}
            {%- set payload_view = make_temp_relation(this, '__cdc_payload').include(database=false, schema=false) -%}
            {%- call statement('create_payload_view') -%}
                create or replace temporary view {{ payload_view }} as
                select
                {%- for col in payload %}
                    {{ col.name }}{{ ',' if not loop.last }}
                {%- endfor %}
                from {{ tmp_relation }}
            {%- endcall -%}
            {%- do floe_schema_evolve(on_schema_change, payload_view, existing_relation) -%}
            {%- do floe_sync_table_properties(target_relation) -%}
            {%- set target_columns = adapter.get_columns_in_relation(target_relation) -%}
            {%- call statement('main') -%}
                {{ floe_cdc_merge_sql(tmp_relation, target_relation, target_columns, payload, cfg) }}
            {%- endcall -%}
            {%- call statement('drop_payload_view') -%}
                drop view if exists {{ payload_view }}
            {%- endcall -%}
        {%- endif -%}
        {%- if watermark and mark -%}
            {%- call statement('record_watermark') -%}
                alter table {{ target_relation }}
                set tblproperties ('floe.cdc.watermark' = '{{ mark }}')
            {%- endcall -%}
        {%- endif -%}
    {%- endif -%}
    {%- call statement('drop_tmp_relation') -%}
        drop view if exists {{ tmp_relation }}
    {%- endcall -%}
{% endmacro %}
