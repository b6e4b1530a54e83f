-- The seed's ventilator_metrics: typed telemetry partitioned by the ingest hour folders.
-- Built by month of ingest time (microbatch): a fresh build is one batch per month
-- since `begin`, a run re-checks this month and the last, and an unchanged batch commits
-- nothing. Ingest time, not eventtime: the demo's events are dated 2022, and dbt counts
-- batches back from now (docs/decisions/0050-ventilator-metrics-microbatch-on-ingest-time.md).
-- `begin` cuts nothing: every row is ingested after this code existed.
{{
    config(
        materialized='incremental',
        incremental_strategy='microbatch',
        event_time='_ingested_at',
        batch_size='month',
        lookback=1,
        begin='2026-11-01',
        partition_by=['ingest_year', 'ingest_month', 'ingest_day', 'ingest_hour'],
    )
}}

with

ventilator as (
    select * from {{ ref('stg_streams__ventilator') }}
),

final as (
    select * from ventilator
)

select * from final
