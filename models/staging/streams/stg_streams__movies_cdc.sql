-- Debezium-flattened movie changes: v2's COUNTRY renamed, the stream order as the
-- final tie-breaker (`_row_in_file`); op and provenance columns passed through for
-- the cdc strategy's Debezium preset.
with

source as (
    select * from {{ ref('raw_streams__movies_cdc') }}
),

renamed as (
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
        _ingested_at,
        _load_seq
    from source
)

select * from renamed
