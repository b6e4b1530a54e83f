-- The customer as of one load (the date dim_customer's scd2 materialization
-- is applying): for every key the load touched, the latest master and address
-- rows since the last full extract, by (load_date, row_audit_ts), ties broken
-- on the file and then the values so the result never depends on file order.
-- Master LEFT JOIN address: a customer exists while it is in the master state.
-- Rendered once per pending load by dim_customer; not materialized on its own.
{{ config(materialized='ephemeral') }}

with

this_load as (
    select
        load_date,
        last_full_date
    from {{ ref('int_customers__loads') }}
    where load_date = {{ floe_scd2_load_date() }}
),

master_rows as (
    select m.*
    from {{ ref('stg_customers__master') }} as m
    inner join this_load as l
        on m.load_date between l.last_full_date and l.load_date
),

address_rows as (
    select a.*
    from {{ ref('stg_customers__address') }} as a
    inner join this_load as l
        on a.load_date between l.last_full_date and l.load_date
),

touched as (
    select m.customer_id
    from master_rows as m
    inner join this_load as l on m.load_date = l.load_date
    union
    select a.customer_id
    from address_rows as a
    inner join this_load as l on a.load_date = l.load_date
),

master_ranked as (
    select
        m.*,
        row_number() over (
            partition by m.customer_id
            order by
                m.load_date desc, m.row_audit_ts desc, m.source_file desc,
                m.rec_source_status desc, m.first_name desc, m.last_name desc,
                m.employer_name desc
        ) as rn
    from master_rows as m
    left semi join touched as t on m.customer_id = t.customer_id
),

address_ranked as (
    select
        a.*,
        row_number() over (
            partition by a.customer_id
            order by
                a.load_date desc, a.row_audit_ts desc, a.source_file desc,
                a.rec_source_status desc, a.email_id desc, a.city desc, a.country desc
        ) as rn
    from address_rows as a
    left semi join touched as t on a.customer_id = t.customer_id
)

select
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
        m.customer_id = a.customer_id
        and a.rn = 1
        and coalesce(a.rec_source_status, '') <> 'D'
where m.rn = 1
