{{ config(materialized='view') }}
-- The loads of the catch-up case (bench/bench_scd2.py): one per load_date of bench.src_catchup.
select load_date, 'changes' as load_kind, cast(count(*) as string) as fingerprint
from bench.src_catchup
group by load_date
