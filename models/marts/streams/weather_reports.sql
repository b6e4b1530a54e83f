-- WeatherReport v1 and v2 in one table: v2's optional location.country is NULL
-- for v1 records (the raw table holds the latest reader type).
with

reports as (
    select * from {{ ref('raw_streams__weather') }}
),

final as (
    select
        location.city,
        location.state,
        location.country,
        reports.temperature,
        timestamp_seconds(reports.timestamp) as observed_at,
        reports._schema_version as schema_version,
        reports._arrival_ts as arrival_ts
    from reports
)

select * from final
