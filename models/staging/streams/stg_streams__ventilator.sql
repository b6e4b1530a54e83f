-- The seed's ApplyMapping: eventtime as timestamp, integers as bigint; the ingest
-- hour folders kept for partitioning. event_time is the wall-clock ingest time, so a
-- microbatch model reading this view gets only its batch's window
-- (docs/decisions/0050-ventilator-metrics-microbatch-on-ingest-time.md).
{{ config(event_time='_ingested_at') }}

with

source as (
    select * from {{ ref('raw_streams__ventilator') }}
),

typed as (
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
        ingest_hour,
        _ingested_at
    from source
)

select * from typed
