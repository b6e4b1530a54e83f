-- dim_catchup_five in the multi-load form (docs/scd2.md, "One rendering for every
-- load"): the same pending loads, the model rendered once for all of them.
{{ config(
    materialized='scd2', unique_key='customer_id', scd2_loads='bench_catchup_loads',
    surrogate_key='customer_sk', valid_from='rec_eff_dt', valid_to='rec_exp_dt',
    delete_detection='status', initial_eff_date='2022-07-01',
    tblproperties={'write.merge.mode': 'merge-on-read', 'write.update.mode': 'merge-on-read',
                   'write.delete.mode': 'merge-on-read'},
) }}
-- depends_on: {{ ref('bench_catchup_loads') }}
select
    p._scd2_load, s.customer_id, s.first_name, s.last_name, s.employer_name, s.email_id,
    s.city, s.country, s._scd2_deleted
from bench.src_catchup as s
inner join {{ floe_scd2_loads() }} as p on s.load_date = p.load_date
