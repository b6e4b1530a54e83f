{#
    audit.floe_scd2_ledger: one row per application of a load to a model
    (model, load_date, fingerprint of its files, snapshot committed, when).
#}
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
