-- One row per customer load: its date, kind and a fingerprint of its files.
-- A load whose fingerprint changes (a file landed late) is pending again for
-- dim_customer; last_full_date bounds the rows that make up the state.
with

files as (
    select
        load_date,
        load_kind,
        source_file
    from {{ ref('stg_customers__master') }}
    union all
    select
        load_date,
        load_kind,
        source_file
    from {{ ref('stg_customers__address') }}
),

loads as (
    select
        load_date,
        max(load_kind) as load_kind,
        count(distinct load_kind) as kinds,
        count(distinct source_file) as files,
        sha2(concat_ws('|', array_sort(collect_set(source_file))), 256) as fingerprint
    from files
    group by load_date
)

select
    load_date,
    load_kind,
    kinds,
    files,
    fingerprint,
    max(case when load_kind = 'full' then load_date end) over (
        order by load_date rows between unbounded preceding and current row
    ) as last_full_date
from loads
