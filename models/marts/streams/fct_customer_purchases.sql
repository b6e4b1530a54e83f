-- icebergdemodb.customer of the GDPR streaming post (docs/privacy.md): customer
-- purchase events with the seed's DDL types, appended per ingest batch,
-- merge-on-read so an erasure (DELETE / MERGE by customerid) writes delete files
-- instead of rewriting data files.
{{ config(
    materialized='incremental',
    incremental_strategy='append',
    tblproperties={
        'format-version': '2',
        'write.delete.mode': 'merge-on-read',
        'write.update.mode': 'merge-on-read',
        'write.merge.mode': 'merge-on-read',
    },
) }}

with

events as (
    select * from {{ ref('stg_streams__customer_events') }}
    {% if is_incremental() %}
        {#- Batches newer than the last applied one, by load sequence (increasing in
            commit order; docs/reliability.md). A table built before _load_seq existed
            is caught up once by its last ingest time. -#}
        {%- set applied = ['_load_seq'] if not execute
            else adapter.get_columns_in_relation(this)
            | map(attribute='name') | map('lower') | list %}
        {%- if '_load_seq' in applied %}
            where _load_seq > (
                select coalesce(max(_load_seq), 0) from {{ this }}
            )
        {%- else %}
            where _ingested_at > (
                select coalesce(max(_ingested_at), timestamp '1970-01-01')
                from {{ this }}
            )
        {%- endif %}
    {% endif %}
),

final as (
    select * from events
)

select * from final
