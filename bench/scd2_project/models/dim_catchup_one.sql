-- The catch-up case (bench/bench_scd2.py): dim_catchup_one applies one pending load,
-- dim_catchup_five five, from the same state; the SQL of the two is the same.
{{ config(
    materialized='scd2', unique_key='customer_id', scd2_loads='bench_catchup_loads',
    surrogate_key='customer_sk', valid_from='rec_eff_dt', valid_to='rec_exp_dt',
    delete_detection='status', initial_eff_date='2022-07-01',
    tblproperties={'write.merge.mode': 'merge-on-read', 'write.update.mode': 'merge-on-read',
                   'write.delete.mode': 'merge-on-read'},
) }}
-- depends_on: {{ ref('bench_catchup_loads') }}
select customer_id, first_name, last_name, employer_name, email_id, city, country, _scd2_deleted
from bench.src_catchup
where load_date = {{ floe_scd2_load_date() }}
