{#
    floe's `snapshot` materialization: dbt snapshots on Iceberg in one MERGE.

    dbt's strategies decide what changed (snapshot_timestamp_strategy /
    snapshot_check_strategy: row_changed, scd_id, hard_deletes); floe builds
    the change set itself (floe_snapshot_changes) and applies it with one
    MERGE on the current versions' scd ids:
    - a new key, or a changed one, gets a new version (valid_to =
      dbt_valid_to_current, or NULL); a changed key's current version is
      closed at the new version's valid_from;
    - hard_deletes 'invalidate': a current key missing from the source is
      closed at the snapshot time; 'new_record' also inserts a deletion
      version (dbt_is_deleted = 'True') that keeps the key and every column
      of the last version; a deleted key that comes back gets a new version;
    - composite unique_keys are compared through aliased key columns (no
      AMBIGUOUS_REFERENCE), null-safe;
    - columns new in the source are added to the snapshot table first; a
      column dropped from the source is kept and reads NULL in new versions;
    - no change, no commit: an empty change set runs no MERGE.
    The first run creates an Iceberg table (no file_format needed) with
    dbt's own build_snapshot_table (docs/decisions/0025-seeds-and-snapshots.md).
#}
{% materialization snapshot, adapter='floe' %}
    {%- set strategy_name = config.get('strategy') -%}
    {%- set grant_config = config.get('grants') -%}
    {%- set file_format = config.get('file_format') -%}
    {%- if file_format not in (none, 'iceberg') -%}
        {{ exceptions.raise_compiler_error(
            "Snapshot " ~ this ~ ": file_format '" ~ file_format ~ "': floe's snapshots are "
            ~ "Iceberg tables; remove file_format or set it to iceberg") }}
    {%- endif -%}
    {%- set existing = load_relation(this) -%}
    {%- set target_relation = this.incorporate(type='table') -%}
    {%- if existing is not none and existing.is_view -%}
        {% do exceptions.relation_wrong_type(existing, 'table') %}
    {%- endif -%}
    {% if not adapter.check_schema_exists(model.database, model.schema) %}
        {% do create_schema(model.schema) %}
    {% endif %}

    {{ run_hooks(pre_hooks, inside_transaction=False) }}
    {{ run_hooks(pre_hooks, inside_transaction=True) }}

    {%- set strategy_macro = strategy_dispatch(strategy_name) -%}
    {%- set strategy = strategy_macro(model, 'snapshotted_data', 'source_data',
        model['config'], existing is not none) -%}
    {%- set sql = model['compiled_code'] -%}

    {%- if existing is none -%}
        {%- call statement('main') -%}
            {{ floe_iceberg_table_as(target_relation, build_snapshot_table(strategy, sql)) }}
        {%- endcall -%}
    {%- else -%}
        {%- set columns = config.get('snapshot_table_column_names')
            or get_snapshot_table_column_names() -%}
        {{ adapter.valid_snapshot_target(existing, columns) }}
        {%- do floe_snapshot_add_columns(target_relation, sql, strategy, columns) -%}
        {%- set changes = make_temp_relation(this).include(database=false, schema=false) -%}
        {%- call statement('snapshot_changes') -%}
            create or replace temporary view {{ changes }} as
            {{ floe_snapshot_changes(strategy, sql, target_relation, columns) }}
        {%- endcall -%}
        {%- if floe_relation_is_empty(changes) -%}
            {{ log(this ~ ': no changes, nothing committed', info=False) }}
            {%- call statement('main') -%}
                select 'no changes' as floe_skipped
            {%- endcall -%}
        {%- else -%}
            {%- call statement('main') -%}
                {{ floe_snapshot_merge(target_relation, changes, columns) }}
            {%- endcall -%}
        {%- endif -%}
        {%- call statement('drop_snapshot_changes') -%}
            drop view if exists {{ changes }}
        {%- endcall -%}
    {%- endif -%}

    {% set should_revoke = should_revoke(existing is not none, full_refresh_mode=false) %}
    {% do apply_grants(target_relation, grant_config, should_revoke) %}
    {% do persist_docs(target_relation, model) %}
    {{ run_hooks(post_hooks, inside_transaction=True) }}
    {{ adapter.commit() }}
    {{ run_hooks(post_hooks, inside_transaction=False) }}
    {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}


{# `create table ... using iceberg ... as <select>` with floe's table properties. #}
{% macro floe_iceberg_table_as(relation, select_sql) %}
    create table {{ relation }}
    using iceberg
    {{ tblproperties_clause() }}
    {{ partition_cols(label="partitioned by") }}
    {{ location_clause() }}
    {{ comment_clause() }}
    as {{ select_sql }}
{% endmacro %}


{#
    Columns of the snapshot's query that its table lacks are added (nothing is
    dropped), and dbt_is_deleted when hard_deletes became new_record.
#}
{% macro floe_snapshot_add_columns(relation, sql, strategy, columns) %}
    {%- set have = adapter.get_columns_in_relation(relation) | map(attribute='name')
        | map('lower') | list -%}
    {%- set missing = [] -%}
    {%- for col in get_column_schema_from_query(sql) if col.name | lower not in have -%}
        {%- do missing.append({'name': col.name, 'data_type': col.data_type}) -%}
    {%- endfor -%}
    {%- if strategy.hard_deletes == 'new_record' and columns.dbt_is_deleted | lower not in have -%}
        {%- do missing.append({'name': columns.dbt_is_deleted, 'data_type': 'string'}) -%}
    {%- endif -%}
    {%- if missing -%}
        {%- call statement('snapshot_add_columns') -%}
            alter table {{ relation }} add columns (
                {%- for col in missing %}
                {{ adapter.quote(col.name) }} {{ col.data_type }}{{ ',' if not loop.last }}
                {%- endfor %}
            )
        {%- endcall -%}
    {%- endif -%}
{% endmacro %}


{#
    The change set of one snapshot run, one row per action:
    `_floe_close` = the scd id of a current version to close at `_floe_close_at`
    (NULL: a row to insert, in the snapshot table's columns).
#}
{% macro floe_snapshot_changes(strategy, sql, target, columns) %}
    {%- set keys = strategy.unique_key if strategy.unique_key is not string
        else [strategy.unique_key] -%}
    {%- set valid_to_current = config.get('dbt_valid_to_current') -%}
    {%- set hard_deletes = strategy.hard_deletes -%}
    {%- set source_names = get_columns_in_query(sql) | map('lower') | list -%}
    {%- set meta = [columns.dbt_scd_id, columns.dbt_updated_at, columns.dbt_valid_from,
        columns.dbt_valid_to, columns.dbt_is_deleted] | map('lower') | list -%}
    {%- set target_columns = adapter.get_columns_in_relation(target) -%}
    {%- set has_deleted = columns.dbt_is_deleted | lower in
        (target_columns | map(attribute='name') | map('lower') | list) -%}
    {%- set key_on = [] -%}
    {%- for key in keys -%}
        {%- do key_on.append('snapshotted_data._floe_key_' ~ loop.index
            ~ ' <=> source_data._floe_key_' ~ loop.index) -%}
    {%- endfor -%}
    {%- set now = snapshot_get_time() -%}
    with snapshot_query as (
        {{ sql }}
    ),

    source_data as (
        select
            sbq.*,
            {% for key in keys -%}
            {{ key }} as _floe_key_{{ loop.index }},
            {% endfor -%}
            {{ strategy.scd_id }} as _floe_new_scd_id,
            {{ strategy.updated_at }} as _floe_updated_at,
            {{ get_dbt_valid_to_current(strategy, {'dbt_valid_to': '_floe_valid_to'}) }}
        from snapshot_query as sbq
    ),

    snapshotted_data as (
        select
            cur.*,
            {% for key in keys -%}
            {{ key }} as _floe_key_{{ loop.index }}{{ ',' if not loop.last }}
            {% endfor %}
        from {{ target }} as cur
        where {{ floe_snapshot_is_current('cur', columns) }}
    ),

    matched as (
        select
            source_data.*,
            snapshotted_data.{{ columns.dbt_scd_id }} as _floe_current_scd_id,
            (
                snapshotted_data.{{ columns.dbt_scd_id }} is null
                or {{ strategy.row_changed }}
                {%- if has_deleted %}
                or coalesce(snapshotted_data.{{ columns.dbt_is_deleted }}, 'False') = 'True'
                {%- endif %}
            ) as _floe_new_version
        from source_data
        left join snapshotted_data
            on {{ key_on | join(' and ') }}
    ),

    new_versions as (
        select
            cast(null as string) as _floe_close,
            cast(null as timestamp) as _floe_close_at,
            {% for col in target_columns -%}
            {%- set name = col.name | lower -%}
            {%- if name == columns.dbt_scd_id | lower -%} _floe_new_scd_id
            {%- elif name == columns.dbt_updated_at | lower -%} _floe_updated_at
            {%- elif name == columns.dbt_valid_from | lower -%} _floe_updated_at
            {%- elif name == columns.dbt_valid_to | lower -%} _floe_valid_to
            {%- elif name == columns.dbt_is_deleted | lower -%} 'False'
            {%- elif name in source_names -%} {{ adapter.quote(col.name) }}
            {%- else -%} cast(null as {{ col.data_type }})
            {%- endif %} as {{ adapter.quote(col.name) }}{{ ',' if not loop.last }}
            {% endfor %}
        from matched
        where _floe_new_version
    ),

    closed_versions as (
        select _floe_current_scd_id as _floe_close, _floe_updated_at as _floe_close_at
        from matched
        where _floe_new_version and _floe_current_scd_id is not null
    )

    {%- if hard_deletes in ('invalidate', 'new_record') %},

    deleted as (
        select snapshotted_data.*
        from snapshotted_data
        left anti join source_data
            on {{ key_on | join(' and ') }}
        {%- if has_deleted %}
        where coalesce(snapshotted_data.{{ columns.dbt_is_deleted }}, 'False') != 'True'
        {%- endif %}
    )
    {%- endif %}

    select * from new_versions
    union all
    select
        _floe_close,
        _floe_close_at,
        {% for col in target_columns -%}
        cast(null as {{ col.data_type }}) as {{ adapter.quote(col.name) }}{{ ',' if not loop.last }}
        {% endfor %}
    from closed_versions
    {%- if hard_deletes in ('invalidate', 'new_record') %}
    union all
    select
        {{ columns.dbt_scd_id }} as _floe_close,
        {{ now }} as _floe_close_at,
        {% for col in target_columns -%}
        cast(null as {{ col.data_type }}) as {{ adapter.quote(col.name) }}{{ ',' if not loop.last }}
        {% endfor %}
    from deleted
    {%- endif %}
    {%- if hard_deletes == 'new_record' %}
    union all
    select
        cast(null as string) as _floe_close,
        cast(null as timestamp) as _floe_close_at,
        {% for col in target_columns -%}
        {%- set name = col.name | lower -%}
        {%- if name == columns.dbt_scd_id | lower -%}
            {{ snapshot_hash_arguments([columns.dbt_scd_id, now]) }}
        {%- elif name in (columns.dbt_updated_at | lower, columns.dbt_valid_from | lower) -%}
            cast({{ now }} as {{ col.data_type }})
        {%- elif name == columns.dbt_valid_to | lower -%}
            cast({{ valid_to_current or 'null' }} as {{ col.data_type }})
        {%- elif name == columns.dbt_is_deleted | lower -%} 'True'
        {%- else -%} {{ adapter.quote(col.name) }}
        {%- endif %} as {{ adapter.quote(col.name) }}{{ ',' if not loop.last }}
        {% endfor %}
    from deleted
    {%- endif %}
{% endmacro %}


{# A version is current when its valid_to is NULL or dbt_valid_to_current. #}
{% macro floe_snapshot_is_current(alias, columns) %}
    {%- set valid_to_current = config.get('dbt_valid_to_current') -%}
    ({{ alias }}.{{ columns.dbt_valid_to }} is null
    {%- if valid_to_current %}
        or {{ alias }}.{{ columns.dbt_valid_to }} = {{ valid_to_current }}
    {%- endif %})
{% endmacro %}


{#
    One MERGE: close the current versions named by `_floe_close`, insert the
    new ones. Only current versions can match, so the scan of the target is
    the current rows' files.
#}
{% macro floe_snapshot_merge(target, changes, columns) %}
    {%- set target_columns = adapter.get_columns_in_relation(target) -%}
    merge into {{ target }} as dest
    using {{ changes }} as change
    on change._floe_close is not null
        and dest.{{ columns.dbt_scd_id }} = change._floe_close
        and {{ floe_snapshot_is_current('dest', columns) }}
    when matched then update set
        dest.{{ columns.dbt_valid_to }} = change._floe_close_at
    when not matched and change._floe_close is null then insert (
        {%- for col in target_columns -%}
        {{ adapter.quote(col.name) }}{{ ', ' if not loop.last }}
        {%- endfor -%}
    ) values (
        {%- for col in target_columns -%}
        change.{{ adapter.quote(col.name) }}{{ ', ' if not loop.last }}
        {%- endfor -%}
    )
{% endmacro %}
