-- The customer as of each load dim_customer's scd2 materialization is applying,
-- all of them in one rendering (`floe_scd2_loads()`: `_scd2_load, load_date`,
-- docs/scd2.md): for every key a load touched, the latest master and address
-- rows since the last full extract on or before that load, by (load_date,
-- row_audit_ts), ties broken on the file and then the values so the result
-- never depends on file order. Master LEFT JOIN address: a customer exists
-- while it is in the master state. Every row carries the load it belongs to.
-- Not materialized on its own.
{{ config(materialized='ephemeral') }}

with

these_loads as (
    select
        p._scd2_load,
        l.load_date,
        l.last_full_date
    from {{ floe_scd2_loads() }} as p
    inner join {{ ref('int_customers__loads') }} as l
        on p.load_date = l.load_date
),

-- these_loads is a few rows, but Spark cannot tell (it aggregates the staged
-- tables): without the hint it shuffles every staged row by load_date, and a full
-- extract's rows all share one date, so one task sorted them all.
touched as (
    select /*+ broadcast(l) */
        m.customer_id,
        l._scd2_load
    from {{ ref('stg_customers__master') }} as m
    inner join these_loads as l on m.load_date = l.load_date
    union
    select /*+ broadcast(l) */
        a.customer_id,
        l._scd2_load
    from {{ ref('stg_customers__address') }} as a
    inner join these_loads as l on a.load_date = l.load_date
),

-- A touched key's rows in its load's window (last full extract .. the load).
master_rows as (
    select
        m.*,
        l._scd2_load
    from {{ ref('stg_customers__master') }} as m
    inner join touched as t on m.customer_id = t.customer_id
    inner join these_loads as l
        on
            t._scd2_load = l._scd2_load
            and m.load_date between l.last_full_date and l.load_date
),

address_rows as (
    select
        a.*,
        l._scd2_load
    from {{ ref('stg_customers__address') }} as a
    inner join touched as t on a.customer_id = t.customer_id
    inner join these_loads as l
        on
            t._scd2_load = l._scd2_load
            and a.load_date between l.last_full_date and l.load_date
),

master_ranked as (
    select
        m.*,
        row_number() over (
            partition by m._scd2_load, m.customer_id
            order by
                m.load_date desc, m.row_audit_ts desc, m.source_file desc,
                m.rec_source_status desc, m.first_name desc, m.last_name desc,
                m.employer_name desc
        ) as rn
    from master_rows as m
),

address_ranked as (
    select
        a.*,
        row_number() over (
            partition by a._scd2_load, a.customer_id
            order by
                a.load_date desc, a.row_audit_ts desc, a.source_file desc,
                a.rec_source_status desc, a.email_id desc, a.city desc, a.country desc
        ) as rn
    from address_rows as a
)

select
    m._scd2_load,
    m.customer_id,
    m.first_name,
    m.last_name,
    m.employer_name,
    a.email_id,
    a.city,
    a.country,
    coalesce(m.rec_source_status = 'D', false) as _scd2_deleted
from master_ranked as m
left join address_ranked as a
    on
        m._scd2_load = a._scd2_load
        and m.customer_id = a.customer_id
        and a.rn = 1
        and coalesce(a.rec_source_status, '') <> 'D'
where m.rn = 1
