-- Weather reports across schema v1 and v2 (country NULL for v1 records).
with

reports as (
    select * from {{ ref('stg_streams__weather') }}
),

final as (
    select * from reports
)

select * from final
