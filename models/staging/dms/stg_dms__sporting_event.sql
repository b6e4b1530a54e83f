-- dms_sample.sporting_event changes as landed: payload, op and provenance columns passed
-- through unchanged for the cdc strategy (every landed column, so a column the
-- source adds later flows through without an edit here).
with

source as (
    select * from {{ ref('raw_dms__sporting_event') }}
),

final as (
    select * from source
)

select * from final
