-- dim_customer has a current row for exactly the customers in the master state
-- of the last applied load: none for deleted keys, none missing for live ones.
-- Only dim_customer is a ref(): the test then runs when dim_customer is selected,
-- not whenever staging is (dbt's eager indirect selection); its inputs are its parents.
{%- set loads = 'intermediate.int_customers__loads' %}
{%- set master = 'staging.stg_customers__master' %}
with

last_applied as (
    select max(cast(load_date as date)) as load_date
    from audit.floe_scd2_ledger
    where model = '{{ ref("dim_customer") }}'
),

this_load as (
    select
        l.load_date,
        l.last_full_date
    from {{ loads }} as l
    inner join last_applied as a on l.load_date = a.load_date
),

ranked as (
    select
        m.customer_id,
        m.rec_source_status,
        row_number() over (
            partition by m.customer_id
            order by
                m.load_date desc, m.row_audit_ts desc, m.source_file desc,
                m.rec_source_status desc, m.first_name desc, m.last_name desc,
                m.employer_name desc
        ) as rn
    from {{ master }} as m
    inner join this_load as l
        on m.load_date between l.last_full_date and l.load_date
),

live as (
    select customer_id
    from ranked
    where rn = 1 and coalesce(rec_source_status, '') <> 'D'
),

current_rows as (
    select customer_id
    from {{ ref('dim_customer') }}
    where rec_exp_dt = date '9999-12-31'
)

select
    coalesce(l.customer_id, c.customer_id) as customer_id,
    case
        when l.customer_id is null then 'current row for a deleted or unknown customer'
        else 'live customer without a current row'
    end as problem
from live as l
full outer join current_rows as c on l.customer_id = c.customer_id
where l.customer_id is null or c.customer_id is null
