-- floe's scd2 on full extracts: the whole state each load, deletes by absence.
{{ config(
    materialized='scd2', unique_key='customer_id', scd2_loads='bench_loads',
    surrogate_key='customer_sk', valid_from='rec_eff_dt', valid_to='rec_exp_dt',
    delete_detection='absence', initial_eff_date='2022-07-01',
    tblproperties={'write.merge.mode': 'merge-on-read', 'write.update.mode': 'merge-on-read',
                   'write.delete.mode': 'merge-on-read'},
) }}
-- depends_on: {{ ref('bench_loads') }}
select customer_id, first_name, last_name, employer_name, email_id, city, country
from bench.src_state
where load_date = {{ floe_scd2_load_date() }}
