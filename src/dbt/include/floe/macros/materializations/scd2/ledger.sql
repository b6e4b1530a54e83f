{#
    audit.floe_scd2_ledger: one row per application of a load to a model
    (model, load_date, fingerprint of its files, snapshot of the table after
    the application, when). Append-only; readers take the latest row per load.
#}
{% macro floe_scd2_ledger_relation() %}
    {{ return(api.Relation.create(schema='audit', identifier='floe_scd2_ledger', type='table')) }}
{% endmacro %}


{#- Through the adapter: two scd2 models building at once (dbt threads) race to
    create it, which Iceberg's JDBC catalog on PostgreSQL reports as a failure
    (floe.runtime.session.create_table_if_missing). -#}
{% macro floe_scd2_ensure_ledger(ledger) %}
    {%- set ddl -%}
        create table if not exists {{ ledger }} (
            model string,
            load_date string,
            fingerprint string,
            snapshot_id bigint,
            applied_at timestamp
        ) using iceberg tblproperties ('format-version' = '2', 'write.wap.enabled' = 'true')
    {%- endset -%}
    {%- do adapter.floe_create_table_if_missing(ledger | string, ddl) -%}
{% endmacro %}


{#
    Everything the materialization needs to know before it writes, in one query:
    the loads the `scd2_loads` model lists ([load_date, kind, fingerprint],
    oldest first), the loads applied ({load_date: fingerprint}, latest
    application wins), the table snapshot the ledger's last application left
    and the table's current snapshot (`target` none: the table is rebuilt).
#}
{% macro floe_scd2_state(cfg, ledger, target) %}
    {%- set model_name = floe_string_literal(this) -%}
    {%- set sql -%}
        with
        loads as (
            select
                cast(load_date as string) as load_date,
                cast(load_kind as string) as load_kind,
                cast(fingerprint as string) as fingerprint
            from {{ ref(cfg.loads) }}
        ),
        applications as (
            select load_date, fingerprint, snapshot_id, applied_at
            from {{ ledger }}
            where model = {{ model_name }}
        ),
        ledger_snapshot as (
            select cast(max_by(snapshot_id, applied_at) as string) as snapshot_id
            from applications
        ),
        table_snapshot as (
            {%- if target is none %}
            select cast(null as string) as snapshot_id
            {%- else %}
            select cast(snapshot_id as string) as snapshot_id
            from {{ target }}.refs
            where name = 'main'
            {%- endif %}
        )
        select 'load' as what, load_date, load_kind, fingerprint
        from loads
        union all
        select 'applied' as what, load_date, null, max_by(fingerprint, applied_at)
        from applications
        group by load_date
        union all
        select 'snapshots' as what, l.snapshot_id, t.snapshot_id, null
        from ledger_snapshot as l
        left join table_snapshot as t on true
    {%- endset -%}
    {%- set loads, applied = [], {} -%}
    {%- set snapshots = {'ledger': none, 'table': none} -%}
    {%- for r in run_query(sql) -%}
        {%- if r[0] == 'load' -%}
            {%- do loads.append([r[1], r[2], r[3]]) -%}
        {%- elif r[0] == 'applied' -%}
            {%- do applied.update({r[1]: r[3]}) -%}
        {%- else -%}
            {%- do snapshots.update({'ledger': r[1], 'table': r[2]}) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return({'loads': loads | sort(attribute='0'), 'applied': applied, 'snapshots': snapshots}) }}
{% endmacro %}


{#
    Loads whose MERGE committed without its ledger rows (the process died in
    between): the table changed since the ledger's last application and holds
    versions opened or closed on their effective dates. They are recorded now
    and left out of the plan; re-applying them against the table that already
    holds them would close versions a second time. Returns the pending loads
    still to apply. Loads that changed nothing leave no trace, and re-applying
    those changes nothing either.
#}
{% macro floe_scd2_recover(target, ledger, pending, applied, first_load, cfg) %}
    {%- set new = [] -%}
    {%- for load in pending if load[0] not in applied -%}
        {%- do new.append(floe_scd2_effective_date(load[0], first_load, cfg)) -%}
    {%- endfor -%}
    {%- if not new -%}{{ return(pending) }}{%- endif -%}
    {%- set opened = [] -%}
    {%- set closed = [] -%}
    {%- for eff in new -%}
        {%- do opened.append("date'" ~ eff ~ "'") -%}
        {%- do closed.append("date_sub(date'" ~ eff ~ "', 1)") -%}
    {%- endfor -%}
    {%- set rows = run_query(
        "select distinct cast(d as string) from ("
        ~ " select " ~ cfg.valid_from ~ " as d from " ~ target
        ~ " where " ~ cfg.valid_from ~ " in (" ~ opened | join(', ') ~ ")"
        ~ " union all select date_add(" ~ cfg.valid_to ~ ", 1) from " ~ target
        ~ " where " ~ cfg.valid_to ~ " in (" ~ closed | join(', ') ~ "))") -%}
    {%- set traced = rows | map(attribute='0') | list -%}
    {%- set done = namespace(upto=0) -%}
    {%- for load in pending -%}
        {%- if load[0] not in applied
            and floe_scd2_effective_date(load[0], first_load, cfg) in traced -%}
            {%- set done.upto = loop.index -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if done.upto == 0 -%}{{ return(pending) }}{%- endif -%}
    {%- set recovered = floe_scd2_plan(pending[:done.upto], first_load, cfg) -%}
    {{ log(this ~ ': loads ' ~ recovered | map(attribute='date') | join(', ')
           ~ ' are in the table without ledger rows (an interrupted build); recorded', info=True) }}
    {%- do floe_scd2_record(ledger, recovered, target) -%}
    {{ return(pending[done.upto:]) }}
{% endmacro %}


{% macro floe_scd2_record(ledger, plan, target) %}
    {%- call statement('record_loads') -%}
        insert into {{ ledger }}
        select
            {{ floe_string_literal(this) }},
            l.load_date,
            l.fingerprint,
            (select snapshot_id from {{ target }}.refs where name = 'main'),
            current_timestamp()
        from values
        {%- for p in plan %}
            ({{ floe_string_literal(p.date) }}, {{ floe_string_literal(p.fingerprint) }})
            {{- ',' if not loop.last }}
        {%- endfor %}
            as l(load_date, fingerprint)
    {%- endcall -%}
{% endmacro %}
