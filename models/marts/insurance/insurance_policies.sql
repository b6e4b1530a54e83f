-- Insurance policies: the full load, then the U/I change files upserted in
-- order (the seed's Delta merge, with the op flag honoured).
with

changes as (
    select * from {{ ref('stg_insurance__policies') }}
    where {{ cdc_unapplied() }}
)

select * from changes
