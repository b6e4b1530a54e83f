-- sampledatabase.movies replicated from the Debezium stream (seed 004-2) with
-- the cdc strategy's Debezium preset: latest change per movie_id by
-- __source_ts_ms then stream order; __op = 'd' or __deleted = 'true' deletes.
-- v2's COUNTRY arrives as a new column (NULL for rows last changed under v1).
with

changes as (
    select * from {{ ref('raw_streams__movies_cdc') }}
    where {{ cdc_unapplied() }}
),

final as (
    select
        movie_id,
        title,
        release_year,
        country,
        __op,
        __source_ts_ms,
        __deleted,
        _source_file,
        cast(_sequence_number as decimal(38, 0)) as _row_in_file,
        _ingested_at
    from changes
)

select * from final
