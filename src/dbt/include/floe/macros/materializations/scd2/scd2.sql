{#
    floe's `scd2` materialization: a Type 2 slowly changing dimension on Iceberg.

    The model's SQL describes ONE load: the source version of the keys that the
    load touched (or of every key, for a full extract), as of the load date
    `{{ floe_scd2_load_date() }}`. The materialization finds the loads that
    have landed and are not yet applied (`scd2_loads`), oldest first, and for
    each one
      1. renders the model for that load date (a temporary view),
      2. tags every key I / U / D / N against the current rows, comparing a
         hash of the tracked columns that cannot collide by concatenation
         (sha2 over to_json of a named struct: names and escaping included),
      3. applies expiries, same-day replacements and inserts in ONE Iceberg
         MERGE (a reader never sees half a load), and
      4. records the load and its file fingerprint in the ledger
         `audit.floe_scd2_ledger`.
    A re-run with nothing pending commits nothing. A load dated before the last
    applied one is refused; `--full-refresh` replays every load in date order
    and yields the same table, surrogate keys included.

    Config (model YAML or config()):
      unique_key         key column or list of columns (required)
      scd2_loads         name of the model listing the loads: load_date,
                         load_kind, fingerprint (required)
      tracked_columns    columns whose change makes a new version
                         (default: every model column but the key and _scd2_*)
      surrogate_key      default 'sk'; numbered max + 1.. in key order
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
    The model may return a boolean `_scd2_deleted` column (a delete flag).
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
    {%- if full_refresh -%}
        {%- if existing_relation is not none -%}
            {%- do adapter.drop_relation(existing_relation) -%}
        {%- endif -%}
        {%- call statement('forget_loads') -%}
            delete from {{ ledger }} where model = '{{ this }}'
        {%- endcall -%}
    {%- endif -%}

    {%- set loads = floe_scd2_loads(cfg) -%}
    {%- set applied = floe_scd2_applied(ledger) -%}
    {%- set pending = floe_scd2_pending(loads, applied, cfg) -%}
    {%- set first_load = loads[0][0] if loads | length > 0 else none -%}
    {%- set src_view = make_temp_relation(this, '__scd2_src').include(database=false, schema=false) -%}

    {%- if full_refresh and pending | length == 0 -%}
        {#- Nothing landed yet: the empty table, its columns from the model. -#}
        {%- call statement('src_shape') -%}
            create or replace temporary view {{ src_view }} as
            {{ compiled_code | replace('__FLOE_SCD2_LOAD_DATE__', first_load or '1970-01-01') }}
        {%- endcall -%}
        {%- set columns = floe_scd2_columns(src_view, cfg) -%}
        {%- call statement('create_target') -%}
            {{ floe_scd2_create_sql(target_relation, src_view, columns, cfg) }}
        {%- endcall -%}
    {%- endif -%}

    {%- set summary = [] -%}
    {%- for load in pending -%}
        {%- set load_date, load_kind, fingerprint = load[0], load[1], load[2] -%}
        {%- set eff = cfg.initial_eff_date if load_date == first_load else load_date -%}
        {%- set full_extract = cfg.delete_detection == 'absence'
            or (cfg.delete_detection == 'auto' and load_kind in cfg.full_extract_kinds) -%}
        {%- call statement('src_' ~ loop.index) -%}
            create or replace temporary view {{ src_view }} as
            {{ compiled_code | replace('__FLOE_SCD2_LOAD_DATE__', load_date) }}
        {%- endcall -%}
        {%- set columns = floe_scd2_columns(src_view, cfg) -%}
        {%- if full_refresh and loop.first -%}
            {#- Into an empty table every row is an insert: create it with them. -#}
            {%- call statement('create_target') -%}
                {{ floe_scd2_create_sql(target_relation, src_view, columns, cfg, eff) }}
            {%- endcall -%}
            {%- set changes = {'counts': 'initial load'} -%}
        {%- else -%}
            {%- set changes = floe_scd2_stage(
                target_relation, src_view, columns, cfg, eff, full_extract, load_date in applied) -%}
            {%- if changes.total > 0 -%}
                {%- call statement('merge_' ~ loop.index) -%}
                    {{ floe_scd2_merge_sql(target_relation, changes.view, columns, cfg, eff) }}
                {%- endcall -%}
            {%- endif -%}
            {%- call statement('uncache_' ~ loop.index) -%}
                uncache table if exists {{ changes.view }}
            {%- endcall -%}
        {%- endif -%}
        {%- do floe_scd2_record(ledger, load_date, fingerprint, target_relation) -%}
        {%- do summary.append(load_date ~ ' ' ~ changes.counts) -%}
        {{ log(this ~ ': applied load ' ~ load_date ~ ' (' ~ load_kind ~ ', effective ' ~ eff
               ~ '): ' ~ changes.counts, info=True) }}
    {%- endfor -%}
    {%- call statement('drop_src') -%}
        drop view if exists {{ src_view }}
    {%- endcall -%}

    {%- call statement('main') -%}
        select {{ pending | length }} as loads_applied
    {%- endcall -%}
    {%- if pending | length == 0 -%}
        {{ log(this ~ ': no pending loads, nothing committed', info=True) }}
    {%- endif -%}

    {% do persist_docs(target_relation, model) %}
    {{ run_hooks(post_hooks) }}
    {{ return({'relations': [target_relation]}) }}
{%- endmaterialization %}
