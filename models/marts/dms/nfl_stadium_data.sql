-- dms_sample.nfl_stadium_data replicated: DMS changes not yet applied, merged by the cdc
-- strategy (key, partitioning and write mode in _dms__models.yml).
with

changes as (
    select * from {{ ref('stg_dms__nfl_stadium_data') }}
    where {{ cdc_unapplied() }}
)

select * from changes
