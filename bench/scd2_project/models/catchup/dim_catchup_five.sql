-- Five pending loads of the catch-up case (config: dbt_project.yml, models/catchup),
-- the model rendered once per load; the same SQL as dim_catchup_one.
-- depends_on: {{ ref('bench_catchup_loads') }}
select customer_id, first_name, last_name, employer_name, email_id, city, country, _scd2_deleted
from bench.src_catchup
where load_date = {{ floe_scd2_load_date() }}
