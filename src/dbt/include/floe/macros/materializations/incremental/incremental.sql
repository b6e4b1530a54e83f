{#
    floe's incremental materialization (SQL and Python models).

    Same contract as dbt-spark's, plus:
    - new rows are a temporary view (SQL and Python alike; Python models run
      in this session), never a scratch table;
    - when the new rows are empty nothing is written, so a re-run with no new
      input commits no Iceberg snapshot;
    - `insert_overwrite` without `partition_by` is refused: on Iceberg it would
      replace the whole table;
    - schema changes default to `append_new_columns`: columns are added, never
      dropped; column types widen only where Iceberg can (int -> bigint,
      float -> double, decimal precision), anything else fails naming the
      table, column and both types (floe_schema_evolve);
    - strategy `cdc` (cdc.sql): op-aware latest-change-per-key MERGE.
#}
{% materialization incremental, adapter='floe', supported_languages=['sql', 'python'] -%}
    {%- set strategy = config.get('incremental_strategy') or 'append' -%}
    {%- set unique_key = config.get('unique_key', none) -%}
    {%- set partition_by = config.get('partition_by', none) -%}
    {%- set language = model['language'] -%}
    {%- set grant_config = config.get('grants') -%}
    {#- dbt fills on_schema_change with 'ignore' when nobody set it: floe's
        default is append_new_columns, so only an explicit setting counts. -#}
    {%- set on_schema_change = config.get('on_schema_change') -%}
    {%- if 'on_schema_change' not in model.get('unrendered_config', {}) -%}
        {%- set on_schema_change = 'append_new_columns' -%}
    {%- endif -%}
    {%- set on_schema_change = incremental_validate_on_schema_change(
        on_schema_change, default='append_new_columns') -%}
    {%- set incremental_predicates = config.get('predicates', none)
        or config.get('incremental_predicates', none) -%}
    {{ floe_validate_incremental(strategy, unique_key, partition_by) }}

    {%- set target_relation = this.incorporate(type='table') -%}
    {%- set existing_relation = load_relation(this) -%}
    {%- set tmp_relation = make_temp_relation(this).include(database=false, schema=false) -%}

    {{ run_hooks(pre_hooks) }}

    {%- if strategy == 'cdc' -%}
        {%- if language != 'sql' -%}
            {{ exceptions.raise_compiler_error(
                "Model " ~ this ~ ": incremental_strategy 'cdc' is for SQL models; "
                ~ "keep the Python model as the raw append and put a SQL model on top") }}
        {%- endif -%}
        {%- do floe_cdc_build(target_relation, existing_relation, tmp_relation,
            compiled_code, on_schema_change) -%}
    {%- elif existing_relation is none or existing_relation.is_view or should_full_refresh() -%}
        {%- if existing_relation is not none -%}
            {% do adapter.drop_relation(existing_relation) %}
        {%- endif -%}
        {%- call statement('main', language=language) -%}
            {{ create_table_as(False, target_relation, compiled_code, language) }}
        {%- endcall -%}
    {%- else -%}
        {%- call statement('create_tmp_relation', language=language) -%}
            {{ create_table_as(True, tmp_relation, compiled_code, language) }}
        {%- endcall -%}
        {%- if floe_relation_is_empty(tmp_relation) -%}
            {{ log(this ~ ': no new rows, nothing committed', info=False) }}
            {%- call statement('main') -%}
                select 'no new rows' as floe_skipped
            {%- endcall -%}
        {%- else -%}
            {%- do floe_schema_evolve(on_schema_change, tmp_relation, existing_relation) -%}
            {%- call statement('main') -%}
                {{ dbt_spark_get_incremental_sql(
                    strategy, tmp_relation, target_relation, existing_relation,
                    unique_key, incremental_predicates) }}
            {%- endcall -%}
        {%- endif -%}
        {%- call statement('drop_tmp_relation') -%}
            drop view if exists {{ tmp_relation }}
        {%- endcall -%}
    {%- endif -%}

    {% set should_revoke = should_revoke(existing_relation, full_refresh_mode) %}
    {% do apply_grants(target_relation, grant_config, should_revoke) %}
    {% do persist_docs(target_relation, model) %}
    {{ run_hooks(post_hooks) }}
    {{ return({'relations': [target_relation]}) }}
{%- endmaterialization %}


{% macro floe_validate_incremental(strategy, unique_key, partition_by) %}
    {%- set allowed = ['append', 'merge', 'insert_overwrite', 'cdc'] -%}
    {%- if strategy not in allowed -%}
        {{ exceptions.raise_compiler_error(
            "Model " ~ this ~ ": incremental_strategy '" ~ strategy
            ~ "' is not one of " ~ allowed | join(', ')) }}
    {%- endif -%}
    {%- if strategy == 'insert_overwrite' and not partition_by -%}
        {{ exceptions.raise_compiler_error(
            "Model " ~ this ~ ": incremental_strategy 'insert_overwrite' without "
            ~ "partition_by would replace the whole Iceberg table on every run. "
            ~ "Set partition_by, or use 'merge' with a unique_key.") }}
    {%- endif -%}
    {%- if strategy in ('merge', 'cdc') and not unique_key -%}
        {{ exceptions.raise_compiler_error(
            "Model " ~ this ~ ": incremental_strategy '" ~ strategy
            ~ "' needs a unique_key (a column or a list of columns).") }}
    {%- endif -%}
{% endmacro %}


{% macro floe_relation_is_empty(relation) %}
    {%- set probe = run_query('select 1 from ' ~ relation ~ ' limit 1') -%}
    {{ return(probe is none or (probe.rows | length) == 0) }}
{% endmacro %}


{#
    Schema evolution of an incremental Iceberg table against its new rows:
    new columns are added (dbt's on_schema_change, default append_new_columns;
    nothing is ever dropped), then column types are reconciled: a type that fits
    the table's is left alone, one Iceberg can widen the column to is applied
    with ALTER COLUMN, anything else fails naming table, column and both types.
#}
{% macro floe_schema_evolve(on_schema_change, source_relation, target_relation) %}
    {%- if on_schema_change == 'sync_all_columns' -%}
        {{ exceptions.raise_compiler_error(
            "Model " ~ this ~ ": on_schema_change 'sync_all_columns' would drop columns "
            ~ "of an Iceberg table; floe never drops. Use append_new_columns.") }}
    {%- endif -%}
    {%- do process_schema_changes(on_schema_change, source_relation, target_relation) -%}
    {%- if on_schema_change == 'ignore' -%}{{ return(none) }}{%- endif -%}
    {%- set target_types = {} -%}
    {%- for col in adapter.get_columns_in_relation(target_relation) -%}
        {%- do target_types.update({col.name | lower: col.dtype | lower | replace(' ', '')}) -%}
    {%- endfor -%}
    {%- for col in adapter.get_columns_in_relation(source_relation) -%}
        {%- set old = target_types.get(col.name | lower) -%}
        {%- set new = col.dtype | lower | replace(' ', '') -%}
        {%- if old is not none -%}
            {%- set change = floe_type_change(old, new) -%}
            {%- if change == 'widen' -%}
                {{ log(this ~ ': widening ' ~ col.name ~ ' from ' ~ old ~ ' to ' ~ new, info=True) }}
                {%- call statement('widen_' ~ col.name) -%}
                    alter table {{ target_relation }} alter column {{ col.name }} type {{ new }}
                {%- endcall -%}
            {%- elif change == 'refuse' -%}
                {{ exceptions.raise_compiler_error(
                    "Table " ~ target_relation ~ ": column " ~ col.name ~ " changes type from "
                    ~ old ~ " to " ~ new ~ ". Iceberg widens only int -> bigint, "
                    ~ "float -> double and decimal(P,S) -> decimal(P2,S) with P2 > P. Cast "
                    ~ col.name ~ " to " ~ old ~ " in the model, add a new column, or rebuild "
                    ~ "the table with --full-refresh.") }}
            {%- endif -%}
        {%- endif -%}
    {%- endfor -%}
{% endmacro %}


{#
    How a column of type `new` (incoming rows) relates to the table's `old`:
    'same', 'fits' (assignable without loss), 'widen' (Iceberg can promote the
    column) or 'refuse'.
#}
{% macro floe_type_change(old, new) %}
    {%- set aliases = {'integer': 'int', 'long': 'bigint', 'short': 'smallint',
        'byte': 'tinyint', 'real': 'float'} -%}
    {%- set old = aliases.get(old, old) -%}
    {%- set new = aliases.get(new, new) -%}
    {%- set integral = ['tinyint', 'smallint', 'int', 'bigint'] -%}
    {%- set timestamps = ['timestamp', 'timestamp_ntz', 'timestamp_ltz'] -%}
    {%- if old == new -%}{{ return('same') }}{%- endif -%}
    {%- if new in ('void', 'null') -%}{{ return('fits') }}{%- endif -%}
    {%- if old in integral and new in integral -%}
        {%- if integral.index(new) <= integral.index(old) -%}{{ return('fits') }}{%- endif -%}
        {{ return('widen' if new == 'bigint' else 'refuse') }}
    {%- endif -%}
    {%- if old == 'double' and (new == 'float' or new in integral) -%}{{ return('fits') }}{%- endif -%}
    {%- if old == 'float' and new == 'double' -%}{{ return('widen') }}{%- endif -%}
    {%- if old.startswith('decimal') and new.startswith('decimal') -%}
        {%- set o = old[8:-1].split(',') -%}
        {%- set n = new[8:-1].split(',') -%}
        {%- if o[1] == n[1] -%}
            {{ return('fits' if n[0] | int <= o[0] | int else 'widen') }}
        {%- endif -%}
        {{ return('refuse') }}
    {%- endif -%}
    {%- if old in timestamps and new in timestamps -%}{{ return('fits') }}{%- endif -%}
    {%- if old.startswith(('struct', 'array', 'map')) or new.startswith(('struct', 'array', 'map')) -%}
        {#- nested types: Spark's own store assignment decides -#}
        {{ return('fits') }}
    {%- endif -%}
    {{ return('refuse') }}
{% endmacro %}
