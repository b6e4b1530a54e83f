-- Insurance policy rows as landed: payload, U/I flag and provenance passed
-- through unchanged for the cdc strategy (flag preset).
with

source as (
    select * from {{ ref('raw_insurance__policies') }}
),

final as (
    select * from source
)

select * from final
