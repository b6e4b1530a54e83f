-- The seed's ventilator_metrics: typed telemetry partitioned by the ingest hour folders.
{{ config(partition_by=['ingest_year', 'ingest_month', 'ingest_day', 'ingest_hour']) }}

with

ventilator as (
    select * from {{ ref('stg_streams__ventilator') }}
),

final as (
    select * from ventilator
)

select * from final
