{{ config(
    materialized='scd2',
    unique_key='customer_id',
    scd2_loads='int_customers__loads',
    surrogate_key='customer_sk',
    valid_from='rec_eff_dt',
    valid_to='rec_exp_dt',
    sentinel='9999-12-31',
    tracked_columns=[
        'first_name', 'last_name', 'employer_name', 'email_id', 'city', 'country'
    ],
    tblproperties={'write.merge.mode': 'merge-on-read', 'write.delete.mode': 'merge-on-read',
                   'write.update.mode': 'merge-on-read'},
) }}
-- depends_on: {{ ref('int_customers__loads') }}

select * from {{ ref('int_customers__state') }}
