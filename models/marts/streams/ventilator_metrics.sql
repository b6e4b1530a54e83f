-- The seed's ventilator_metrics: ApplyMapping's typed columns (eventtime as
-- timestamp, integers as bigint), partitioned by the ingest hour folders.
{{ config(partition_by=['ingest_year', 'ingest_month', 'ingest_day', 'ingest_hour']) }}

with

ventilator as (
    select * from {{ ref('raw_streams__ventilator') }}
),

final as (
    select
        cast(ventilatorid as bigint) as ventilatorid,
        cast(eventtime as timestamp) as eventtime,
        serialnumber,
        cast(pressurecontrol as bigint) as pressurecontrol,
        cast(o2stats as bigint) as o2stats,
        cast(minutevolume as bigint) as minutevolume,
        manufacturer,
        ingest_year,
        ingest_month,
        ingest_day,
        ingest_hour
    from ventilator
)

select * from final
