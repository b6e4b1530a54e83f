-- WeatherReport v1 and v2 in one shape: v2's optional location.country is NULL
-- for v1 records (the raw table holds the latest reader type).
with

source as (
    select * from {{ ref('raw_streams__weather') }}
),

flattened as (
    select
        location.city,
        location.state,
        location.country,
        source.temperature,
        timestamp_seconds(source.timestamp) as observed_at,
        source._schema_version as schema_version,
        source._arrival_ts as arrival_ts
    from source
)

select * from flattened
