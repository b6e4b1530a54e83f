{#
    floe's `scd2` materialization: a Type 2 slowly changing dimension on Iceberg.

    The model's SQL describes ONE load: the source version of the keys that the
    load touched (or of every key, for a full extract), as of the load date
    `{{ floe_scd2_load_date() }}`; or, in the multi-load form, every pending
    load at once: it reads `{{ floe_scd2_loads() }}` (`_scd2_load, load_date`)
    and returns `_scd2_load` with each row. The materialization finds the loads that
    have landed and are not yet applied (`scd2_loads`), and applies ALL of them
    in one set-based statement (docs/decisions/0013-scd2-set-based-catch-up.md):
      1. the model is rendered once per pending load and the renderings are
         stacked (UNION ALL, each tagged with its load);
      2. window functions over each key's events (its current row, then its
         version in each load) tag every event I / U / D / N against the state
         before it, comparing the tracked columns as one struct, field by
         field (floe_scd2_tracked: exact, NULL equal to NULL), and give every
         new version its valid_from, valid_to and surrogate key;
      3. ONE Iceberg MERGE closes current rows and inserts the new versions (a
         reader never sees part of a build), or one CREATE TABLE AS when the
         table is (re)built;
      4. the loads and their file fingerprints are recorded in the ledger
         `audit.floe_scd2_ledger`.
    The result is the table applying the loads one at a time, oldest first,
    each with its own run date, would give, surrogate keys included. Nothing
    pending commits nothing. A load dated before the last applied one is
    refused; `--full-refresh` replays every load and yields the same table.

    Config (model YAML or config()):
      unique_key         key column or list of columns (required)
      scd2_loads         name of the model listing the loads: load_date,
                         load_kind, fingerprint (required)
      tracked_columns    columns whose change makes a new version
                         (default: every model column but the key and _scd2_*)
      surrogate_key      default 'sk'; numbered max + 1.. by load, then key
      valid_from         default 'valid_from'
      valid_to           default 'valid_to'
      sentinel           default '9999-12-31' (valid_to of current rows)
      initial_eff_date   valid_from of the first load's rows
                         (default: var scd2_initial_eff_date, else the load date)
      delete_detection   'auto' (default): loads whose kind is in
                         full_extract_kinds delete keys by absence, others only
                         by `_scd2_deleted`; 'absence': every load is a full
                         extract; 'status': only `_scd2_deleted` deletes
      full_extract_kinds default ['full']
    The model may return a boolean `_scd2_deleted` column (a delete flag), and
    must return one row per key and load (two fail the build, naming the key).
    The var `run_date` applies loads up to that date only.
#}


{% materialization scd2, adapter='floe', supported_languages=['sql'] -%}
    {%- set cfg = floe_scd2_config() -%}
    {%- set target_relation = this.incorporate(type='table') -%}
    {%- set existing_relation = load_relation(this) -%}
    {%- set ledger = floe_scd2_ledger_relation() -%}
    {%- set full_refresh = should_full_refresh() or existing_relation is none
        or existing_relation.is_view -%}

    {{ run_hooks(pre_hooks) }}
    {%- do floe_scd2_ensure_ledger(ledger) -%}
    {#- Nothing pending last time, and its loads model, its rows of the ledger (shared
        by every dimension) and the table are as they were then: nothing can be pending
        now (docs/scd2.md, "Nothing pending"). -#}
    {%- set memo_inputs = [
        ref(cfg.loads) | string,
        {'relation': ledger | string, 'column': 'model', 'value': this | string},
        target_relation | string,
    ] -%}
    {%- set memo_salt = 'run_date=' ~ (cfg.run_date or '') -%}
    {%- set settled = not full_refresh
        and adapter.floe_settled('scd2', this | string, memo_inputs, memo_salt) -%}
    {%- if settled -%}
    {%- set pending = [] -%}
    {{ log(this ~ ': no pending loads (loads, ledger and table unchanged since the last build),'
           ~ ' nothing committed', info=True) }}
    {%- else -%}
    {%- set state = floe_scd2_state(cfg, ledger, none if full_refresh else target_relation) -%}
    {%- set applied = {} if full_refresh else state.applied -%}
    {%- if full_refresh -%}
        {%- if existing_relation is not none -%}
            {%- do adapter.drop_relation(existing_relation) -%}
        {%- endif -%}
        {%- if state.applied -%}
            {%- call statement('forget_loads') -%}
                delete from {{ ledger }} where model = {{ floe_string_literal(this) }}
            {%- endcall -%}
        {%- endif -%}
    {%- endif -%}

    {%- set first_load = state.loads[0][0] if state.loads | length > 0 else none -%}
    {%- set pending = floe_scd2_pending(state.loads, applied, cfg) -%}
    {%- if pending and not full_refresh
        and state.snapshots.ledger != state.snapshots.table -%}
        {%- set pending = floe_scd2_recover(
            target_relation, ledger, pending, applied, first_load, cfg) -%}
    {%- endif -%}
    {%- set src_view = make_temp_relation(this, '__scd2_src').include(database=false, schema=false) -%}

    {%- if pending | length == 0 -%}
        {%- if full_refresh -%}
            {#- Nothing landed yet: the empty table, its columns from the model. -#}
            {%- call statement('src_shape') -%}
                create or replace temporary view {{ src_view }} as
                {{ compiled_code | replace('__FLOE_SCD2_LOAD_DATE__', first_load or '1970-01-01') }}
            {%- endcall -%}
            {%- set columns = floe_scd2_columns(src_view, cfg) -%}
            {%- call statement('create_target') -%}
                {{ floe_scd2_create_sql(target_relation, src_view, columns, cfg) }}
            {%- endcall -%}
            {%- call statement('drop_src') -%}
                drop view if exists {{ src_view }}
            {%- endcall -%}
        {%- else -%}
            {{ log(this ~ ': no pending loads, nothing committed', info=True) }}
        {%- endif -%}
    {%- else -%}
        {%- set plan = floe_scd2_plan(pending, first_load, cfg) -%}
        {%- set reapply = not full_refresh and plan[0].date in applied -%}
        {%- set versions = make_temp_relation(this, '__scd2_versions').include(database=false, schema=false) -%}
        {#- Pinned: analyzed once here, not again by each statement that reads it (the
            stack is one rendering per load; each analysis loaded every table it reads
            from the catalog again: docs/scd2.md, "Catch-up cost"). -#}
        {%- set stack_sql = floe_scd2_source_sql(compiled_code, plan) -%}
        {{ log(this ~ ': stacking ' ~ plan | length ~ ' load(s) into ' ~ src_view ~ ':\n' ~ stack_sql) }}
        {%- do adapter.floe_pin_view(stack_sql, src_view | string) -%}
        {#- Change loads on a built table: the versions read the stacked loads twice
            (the keys they carry pick the table's current rows, then their events),
            and every reading of the stack plans, compiles and scans each load's
            rendering again: a cost per pending load. Frozen once, the stack is
            read from the executors' memory (docs/scd2.md, "Catch-up cost").
            Full extracts are read once and left as they are: their stack is the
            whole state per load. -#}
        {%- set stack_once = not full_refresh
            and plan | selectattr('full') | list | length == 0 -%}
        {%- set loads_view = src_view -%}
        {%- if stack_once -%}
            {%- set loads_view = make_temp_relation(this, '__scd2_loads').include(database=false, schema=false) -%}
            {%- do adapter.floe_freeze_view(src_view | string, loads_view | string) -%}
        {%- endif -%}
        {%- set columns = floe_scd2_columns(loads_view, cfg) -%}
        {%- if not columns.tags_loads -%}
            {{ exceptions.raise_compiler_error("Model " ~ this ~ " reads floe_scd2_loads() and "
                ~ "must return its _scd2_load column with each row (docs/scd2.md)") }}
        {%- endif -%}
        {%- call statement('versions') -%}
            create or replace temporary view {{ versions }} as
            {{ floe_scd2_versions_sql(none if full_refresh else target_relation,
                loads_view, columns, cfg, plan, reapply) }}
        {%- endcall -%}
        {%- if full_refresh -%}
            {%- call statement('create_target') -%}
                {{ floe_scd2_create_sql(target_relation, src_view, columns, cfg, versions) }}
            {%- endcall -%}
            {%- set summary = 'table created' -%}
        {%- else -%}
            {#- Computed once: the counts and the MERGE read the frozen rows (a
                cached view that reads the target is recomputed by the MERGE). -#}
            {%- set frozen = make_temp_relation(this, '__scd2_frozen').include(database=false, schema=false) -%}
            {%- do adapter.floe_freeze_view(versions | string, frozen | string) -%}
            {%- set counts = floe_scd2_counts(frozen, cfg) -%}
            {%- if counts.rows > 0 -%}
                {%- set key_filter = floe_scd2_key_filter(frozen, cfg, counts) -%}
                {%- call statement('merge') -%}
                    {{ floe_scd2_merge_sql(target_relation, frozen, columns, cfg, plan, reapply,
                        key_filter) }}
                {%- endcall -%}
            {%- endif -%}
            {%- do adapter.floe_release_view(frozen | string) -%}
            {%- set summary = counts.text -%}
        {%- endif -%}
        {%- call statement('drop_views') -%}
            drop view if exists {{ versions }}
        {%- endcall -%}
        {%- if stack_once -%}
            {%- do adapter.floe_release_view(loads_view | string) -%}
        {%- endif -%}
        {%- call statement('drop_src') -%}
            drop view if exists {{ src_view }}
        {%- endcall -%}
        {%- do floe_scd2_record(ledger, plan, target_relation) -%}
        {{ log(this ~ ': applied ' ~ plan | length ~ ' load(s) '
               ~ plan | map(attribute='date') | join(', ')
               ~ (' (re-applying ' ~ plan[0].date ~ ')' if reapply else '')
               ~ ': ' ~ summary, info=True) }}
    {%- endif -%}
    {%- do adapter.floe_remember_settled('scd2', this | string, memo_inputs, memo_salt) -%}
    {%- endif -%}

    {%- call statement('main') -%}
        select {{ pending | length }} as loads_applied
    {%- endcall -%}

    {% do persist_docs(target_relation, model) %}
    {{ run_hooks(post_hooks) }}
    {{ return({'relations': [target_relation]}) }}
{%- endmaterialization %}


{#
    What the staged versions will do, counted in one pass over the frozen rows:
    new keys, changed versions, current rows whose valid_to changes; `rows` 0
    means the MERGE has nothing to do and is skipped (no empty snapshot);
    `matched`: the rows the MERGE matches in the table, and `bounds`: each key
    column's min and max over them, as strings (floe_scd2_key_filter).
#}
{% macro floe_scd2_counts(versions, cfg) %}
    {%- set sql -%}
        select
            count(*),
            count_if(_scd2_op = 'I'),
            count_if(_scd2_op = 'U'),
            count_if(_scd2_row = 'match')
        {%- for k in cfg.key_cols %},
            cast(min(case when _scd2_row = 'match' then {{ k }} end) as string),
            cast(max(case when _scd2_row = 'match' then {{ k }} end) as string)
        {%- endfor %}
        from {{ versions }}
    {%- endset -%}
    {%- set r = run_query(sql).rows[0] -%}
    {%- set c = {'new': r[1], 'changed': r[2], 'closed_or_reopened': r[3]} -%}
    {%- set bounds = {} -%}
    {%- for k in cfg.key_cols -%}
        {%- do bounds.update({k | lower: (r[4 + 2 * loop.index0], r[5 + 2 * loop.index0])}) -%}
    {%- endfor -%}
    {{ return({'rows': r[0], 'counts': c, 'matched': r[3], 'bounds': bounds,
               'text': 'new keys ' ~ c.new ~ ', changed versions ' ~ c.changed
                       ~ ', current rows closed or re-opened ' ~ c.closed_or_reopened}) }}
{% endmacro %}
