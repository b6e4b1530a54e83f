-- ventilator_metrics is a microbatch model on ingest time that re-reads the current
-- and the previous month of ingests per build
-- (docs/decisions/0050-ventilator-metrics-microbatch-on-ingest-time.md). A raw row it
-- lacks means a longer gap between an ingest and the next build: this test fails,
-- naming the month, instead of the mart staying short; backfill that month with
-- `dbt run -s ventilator_metrics --event-time-start <month> --event-time-end <next>`.
-- Only the mart is a ref(), so the test runs when the mart is selected (dbt's eager
-- indirect selection), not whenever the raw model is; raw's name comes from the graph.
{%- set raw = graph.nodes.get('model.floe.raw_streams__ventilator') if execute else none %}
{%- set raw_table = raw.schema ~ '.' ~ (raw.alias or raw.name) if raw else 'raw.ventilator' %}
with

raw_months as (
    select
        date_trunc('month', _ingested_at) as ingest_month,
        count(*) as raw_rows
    from {{ raw_table }}
    group by 1
),

mart_months as (
    select
        date_trunc('month', _ingested_at) as ingest_month,
        count(*) as mart_rows
    from {{ ref('ventilator_metrics') }}
    group by 1
)

select
    r.ingest_month,
    r.raw_rows,
    coalesce(m.mart_rows, 0) as mart_rows
from raw_months as r
left join mart_months as m on r.ingest_month = m.ingest_month
where coalesce(m.mart_rows, 0) < r.raw_rows
