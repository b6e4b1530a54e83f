-- The latest reference extract (each file is a full extract): what the product
-- priority table says now, for the dbt snapshot snapshots.product_priority_observed.
with

extracts as (
    select * from {{ ref('stg_reference__product_priority') }}
),

latest_load as (
    select max(load_date) as load_date from extracts
),

final as (
    select
        extracts.item,
        extracts.price,
        extracts.priority
    from extracts
    inner join latest_load on extracts.load_date = latest_load.load_date
)

select * from final
