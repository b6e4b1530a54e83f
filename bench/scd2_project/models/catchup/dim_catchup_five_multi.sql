-- dim_catchup_five in the multi-load form (docs/scd2.md, "One rendering for every
-- load"): the same pending loads, the model rendered once for all of them.
-- depends_on: {{ ref('bench_catchup_loads') }}
select
    p._scd2_load, s.customer_id, s.first_name, s.last_name, s.employer_name, s.email_id,
    s.city, s.country, s._scd2_deleted
from bench.src_catchup as s
inner join {{ floe_scd2_loads() }} as p on s.load_date = p.load_date
