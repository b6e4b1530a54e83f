-- Unicorn ride requests for analysts, flattened by stg_streams__unicorn_rides.
with

rides as (
    select * from {{ ref('stg_streams__unicorn_rides') }}
),

final as (
    select * from rides
)

select * from final
