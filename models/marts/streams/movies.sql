-- sampledatabase.movies replicated from the Debezium stream (docs/cdc.md) with
-- the cdc strategy's Debezium preset: latest change per movie_id by
-- __source_ts_ms then stream order; __op = 'd' or __deleted = 'true' deletes.
-- v2's COUNTRY arrives as a new column (NULL for rows last changed under v1).
with

changes as (
    select * from {{ ref('stg_streams__movies_cdc') }}
    where {{ cdc_unapplied() }}
),

final as (
    select * from changes
)

select * from final
