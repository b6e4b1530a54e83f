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

{% macro floe_scd2_load_date() -%}
    cast('__FLOE_SCD2_LOAD_DATE__' as date)
{%- endmacro %}


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


{% macro floe_scd2_config() %}
    {%- set key = config.require('unique_key') -%}
    {%- set keys = [key] if key is string else key -%}
    {%- set mode = config.get('delete_detection', 'auto') -%}
    {%- if mode not in ['auto', 'absence', 'status'] -%}
        {{ exceptions.raise_compiler_error("Model " ~ this ~ ": delete_detection '" ~ mode
            ~ "' is not one of auto, absence, status") }}
    {%- endif -%}
    {{ return({
        'key_cols': keys,
        'loads': config.require('scd2_loads'),
        'tracked': config.get('tracked_columns', none),
        'sk': config.get('surrogate_key', 'sk'),
        'valid_from': config.get('valid_from', 'valid_from'),
        'valid_to': config.get('valid_to', 'valid_to'),
        'sentinel': config.get('sentinel', '9999-12-31'),
        'initial_eff_date': config.get('initial_eff_date', none)
            or var('scd2_initial_eff_date', none),
        'delete_detection': mode,
        'full_extract_kinds': config.get('full_extract_kinds', ['full']),
        'run_date': var('run_date', none),
    }) }}
{% endmacro %}


{% macro floe_scd2_ledger_relation() %}
    {{ return(api.Relation.create(schema='audit', identifier='floe_scd2_ledger', type='table')) }}
{% endmacro %}


{% macro floe_scd2_ensure_ledger(ledger) %}
    {%- call statement('ensure_ledger') -%}
        create table if not exists {{ ledger }} (
            model string,
            load_date string,
            fingerprint string,
            snapshot_id bigint,
            applied_at timestamp
        ) using iceberg tblproperties ('format-version' = '2')
    {%- endcall -%}
{% endmacro %}


{% macro floe_scd2_loads(cfg) %}
    {#- [(load_date 'YYYY-MM-DD', kind, fingerprint)], oldest first. -#}
    {%- set rel = ref(cfg.loads) -%}
    {%- set rows = run_query(
        "select cast(load_date as string), cast(load_kind as string), cast(fingerprint as string) from "
        ~ rel ~ " order by 1") -%}
    {%- set loads = [] -%}
    {%- for r in rows -%}
        {%- do loads.append([r[0], r[1], r[2]]) -%}
    {%- endfor -%}
    {{ return(loads) }}
{% endmacro %}


{% macro floe_scd2_applied(ledger) %}
    {#- {load_date: fingerprint} of the loads applied to this model (latest application wins). -#}
    {%- set rows = run_query(
        "select load_date, max_by(fingerprint, applied_at) from " ~ ledger
        ~ " where model = '" ~ this ~ "' group by load_date") -%}
    {%- set applied = {} -%}
    {%- for r in rows -%}
        {%- do applied.update({r[0]: r[1]}) -%}
    {%- endfor -%}
    {{ return(applied) }}
{% endmacro %}


{% macro floe_scd2_pending(loads, applied, cfg) %}
    {%- set last_applied = (applied.keys() | sort | last) if applied else none -%}
    {%- set pending = [] -%}
    {%- for load in loads -%}
        {%- if (cfg.run_date is none or load[0] <= cfg.run_date | string)
              and applied.get(load[0]) != load[2] -%}
            {%- if last_applied is not none and load[0] < last_applied -%}
                {{ exceptions.raise_compiler_error(
                    "Model " ~ this ~ ": load " ~ load[0] ~ " is older than the last applied load "
                    ~ last_applied ~ ". SCD2 history is applied in load_date order; a load that "
                    ~ "lands (or changes) before the last applied one cannot be slotted in. "
                    ~ "Rebuild the history with `dbt build --full-refresh -s " ~ model.name ~ "`.") }}
            {%- endif -%}
            {%- do pending.append(load) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(pending) }}
{% endmacro %}


{% macro floe_scd2_columns(src_view, cfg) %}
    {#- The model's columns: all, attributes (non-key), tracked, and whether it flags deletes. -#}
    {%- set names = run_query('select * from ' ~ src_view ~ ' limit 0').column_names -%}
    {%- set data = [] -%}
    {%- for n in names if not n.startswith('_scd2_') -%}{%- do data.append(n) -%}{%- endfor -%}
    {%- for k in cfg.key_cols if k not in data -%}
        {{ exceptions.raise_compiler_error("Model " ~ this ~ ": unique_key column '" ~ k
            ~ "' is not a column of the model") }}
    {%- endfor -%}
    {%- set attrs = [] -%}
    {%- for n in data if n not in cfg.key_cols -%}{%- do attrs.append(n) -%}{%- endfor -%}
    {%- set tracked = cfg.tracked or attrs -%}
    {%- for t in tracked if t not in attrs -%}
        {{ exceptions.raise_compiler_error("Model " ~ this ~ ": tracked column '" ~ t
            ~ "' is not a non-key column of the model") }}
    {%- endfor -%}
    {{ return({'data': data, 'attrs': attrs, 'tracked': tracked,
               'flags_deletes': '_scd2_deleted' in names}) }}
{% endmacro %}


{% macro floe_scd2_hash(alias, tracked) -%}
    sha2(to_json(named_struct(
        {%- for c in tracked %}'{{ c }}', {{ alias }}.{{ c }}{{ ', ' if not loop.last }}{% endfor -%}
    )), 256)
{%- endmacro %}


{% macro floe_scd2_key_join(left, right, keys) -%}
    {%- for k in keys %}{{ left }}.{{ k }} = {{ right }}.{{ k }}{{ ' and ' if not loop.last }}{% endfor -%}
{%- endmacro %}


{% macro floe_scd2_create_sql(relation, src_view, columns, cfg, eff=none) %}
    {#- Empty (eff none), or the first load itself: one CTAS, no MERGE of N inserts. -#}
    create table {{ relation }}
    using iceberg
    {{ partition_cols(label="partitioned by") }}
    tblproperties (
    {%- for k, v in floe_table_properties().items() %}
        '{{ k }}' = '{{ v }}'{{ ',' if not loop.last }}
    {%- endfor %}
    )
    as select
    {%- if eff is none %}
        cast(null as bigint) as {{ cfg.sk }},
    {%- else %}
        cast(row_number() over (order by {{ cfg.key_cols | join(', ') }}) as bigint)
            as {{ cfg.sk }},
    {%- endif %}
        {%- for c in columns.data %}
        {{ c }},
        {%- endfor %}
        {{ "cast(null as date)" if eff is none else "date'" ~ eff ~ "'" }} as {{ cfg.valid_from }},
        {{ "cast(null as date)" if eff is none else "date'" ~ cfg.sentinel ~ "'" }} as {{ cfg.valid_to }}
    from {{ src_view }}
    {%- if eff is none %}
    where false
    {%- elif columns.flags_deletes %}
    where not coalesce(_scd2_deleted, false)
    {%- endif %}
{% endmacro %}


{% macro floe_scd2_stage(target, src_view, columns, cfg, eff, full_extract, reapply) %}
    {#-
        Tag each key against the table as it was before this load (P) and stage
        the MERGE input: one 'match' row per key to expire (U, D) or, when the
        load is applied again (a late file, a same-day correction), per key
        the earlier application touched, so that it is rolled back; and one
        'insert' row per new version, numbered max(sk of P) + 1.. in key order.
        Re-applying a load therefore yields exactly what applying its final
        content once yields, which is what a full refresh does.
    -#}
    {%- set view = make_temp_relation(this, '__scd2_changes').include(database=false, schema=false) -%}
    {%- set deleted = 's._scd2_deleted' if columns.flags_deletes else 'false' -%}
    {%- set k0 = cfg.key_cols[0] -%}
    {%- set vf, vt = cfg.valid_from, cfg.valid_to -%}
    {%- set day_before = "date_sub(date'" ~ eff ~ "', 1)" -%}
    {%- call statement('stage') -%}
        create or replace temporary view {{ view }} as
        with
        src as (
            select s.*, coalesce({{ deleted }}, false) as _scd2_del
            from {{ src_view }} as s
        ),
        cur as (
            {#- The current rows of P: what was current before this load. Hashes are
                computed after the join, so a change load hashes only the keys it touched. -#}
            select t.*
            from {{ target }} as t
            where t.{{ vt }} = date'{{ cfg.sentinel }}'
            {%- if reapply %}
                and t.{{ vf }} < date'{{ eff }}'
                or t.{{ vt }} = {{ day_before }}
            {%- endif %}
        ),
        {%- if reapply %}
        footprint as (
            select distinct {{ cfg.key_cols | join(', ') }}
            from {{ target }}
            where {{ vf }} = date'{{ eff }}' or {{ vt }} = {{ day_before }}
        ),
        {%- endif %}
        tagged as (
            select
                {%- for k in cfg.key_cols %}
                coalesce(s.{{ k }}, c.{{ k }}) as {{ k }},
                {%- endfor %}
                {%- for a in columns.attrs %}
                s.{{ a }},
                {%- endfor %}
                case
                    when c.{{ k0 }} is null and (s.{{ k0 }} is null or s._scd2_del) then 'N'
                    when c.{{ k0 }} is null then 'I'
                    when s.{{ k0 }} is null then {{ "'D'" if full_extract else "'N'" }}
                    when s._scd2_del then 'D'
                    when {{ floe_scd2_hash('s', columns.tracked) }}
                        <> {{ floe_scd2_hash('c', columns.tracked) }} then 'U'
                    else 'N'
                end as _scd2_op
            from src as s
            {{ 'full outer' if full_extract else 'left' }} join cur as c
                on {{ floe_scd2_key_join('s', 'c', cfg.key_cols) }}
        ),
        max_sk as (
            select coalesce(max({{ cfg.sk }}), 0) as max_sk
            from {{ target }}
            {%- if reapply %}
            where {{ vf }} < date'{{ eff }}'
            {%- endif %}
        )
        select 'match' as _scd2_row, t.*, cast(null as bigint) as _scd2_sk
        from tagged as t
        where t._scd2_op in ('U', 'D')
        {%- if reapply %}
        union all
        select 'match' as _scd2_row, t.*, cast(null as bigint) as _scd2_sk
        from tagged as t
        left semi join footprint as f on {{ floe_scd2_key_join('t', 'f', cfg.key_cols) }}
        where t._scd2_op in ('N', 'I')
        union all
        -- footprint keys the new content no longer mentions: rolled back too
        select 'match' as _scd2_row,
            {%- for k in cfg.key_cols %} f.{{ k }},{% endfor %}
            {%- for a in columns.attrs %} null as {{ a }},{% endfor %}
            'N' as _scd2_op, cast(null as bigint) as _scd2_sk
        from footprint as f
        left anti join tagged as t on {{ floe_scd2_key_join('f', 't', cfg.key_cols) }}
        {%- endif %}
        union all
        select 'insert' as _scd2_row, t.*,
            m.max_sk + row_number() over (
                order by {% for k in cfg.key_cols %}t.{{ k }}{{ ', ' if not loop.last }}{% endfor %}
            ) as _scd2_sk
        from tagged as t
        cross join max_sk as m
        where t._scd2_op in ('I', 'U')
    {%- endcall -%}
    {#- Computed once: the counts below and the MERGE read the cached rows. -#}
    {%- call statement('cache_stage') -%}
        cache table {{ view }}
    {%- endcall -%}
    {%- set counts = run_query(
        "select _scd2_row, _scd2_op, count(*) from " ~ view ~ " group by 1, 2") -%}
    {%- set c = {'inserted': 0, 'changed': 0, 'deleted': 0, 'rolled_back': 0} -%}
    {%- set total = namespace(n=0) -%}
    {%- for r in counts -%}
        {%- set total.n = total.n + r[2] -%}
        {%- if r[0] == 'insert' and r[1] == 'I' -%}{%- do c.update({'inserted': c.inserted + r[2]}) -%}
        {%- elif r[0] == 'match' and r[1] == 'U' -%}{%- do c.update({'changed': c.changed + r[2]}) -%}
        {%- elif r[0] == 'match' and r[1] == 'D' -%}{%- do c.update({'deleted': c.deleted + r[2]}) -%}
        {%- elif r[0] == 'match' -%}{%- do c.update({'rolled_back': c.rolled_back + r[2]}) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return({'view': view, 'total': total.n, 'counts': c}) }}
{% endmacro %}


{% macro floe_scd2_merge_sql(target, staged, columns, cfg, eff) %}
    {%- set vf, vt = cfg.valid_from, cfg.valid_to -%}
    {%- set day_before = "date_sub(date'" ~ eff ~ "', 1)" -%}
    merge into {{ target }} as t
    using {{ staged }} as s
    on s._scd2_row = 'match'
        and {{ floe_scd2_key_join('t', 's', cfg.key_cols) }}
        and (t.{{ vt }} = date'{{ cfg.sentinel }}'
             or t.{{ vt }} = {{ day_before }} or t.{{ vf }} = date'{{ eff }}')
    {#- Rows an earlier application of this load inserted: replaced by this one. -#}
    when matched and t.{{ vf }} = date'{{ eff }}' then delete
    when matched and s._scd2_op in ('U', 'D') then update set
        t.{{ vt }} = {{ day_before }}
    {#- Expired by an earlier application of this load, unchanged now: current again. -#}
    when matched and t.{{ vt }} <> date'{{ cfg.sentinel }}' then update set
        t.{{ vt }} = date'{{ cfg.sentinel }}'
    when not matched and s._scd2_row = 'insert' then insert (
        {{ cfg.sk }},
        {%- for c in columns.data %} {{ c }},{% endfor %}
        {{ vf }}, {{ vt }}
    ) values (
        s._scd2_sk,
        {%- for c in columns.data %} s.{{ c }},{% endfor %}
        date'{{ eff }}', date'{{ cfg.sentinel }}'
    )
{% endmacro %}


{% macro floe_scd2_record(ledger, load_date, fingerprint, target) %}
    {#- Append-only (cheaper than a MERGE); readers take the latest row per load. -#}
    {%- call statement('record_load') -%}
        insert into {{ ledger }}
        select
            '{{ this }}',
            '{{ load_date }}',
            '{{ fingerprint }}',
            (select snapshot_id from {{ target }}.snapshots order by committed_at desc limit 1),
            current_timestamp()
    {%- endcall -%}
{% endmacro %}
