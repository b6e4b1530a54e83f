{{ config(materialized='view') }}
select load_date, 'changes' as load_kind, cast(count(*) as string) as fingerprint
from bench.src_changes
group by load_date
