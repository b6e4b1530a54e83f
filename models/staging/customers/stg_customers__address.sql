with

source as (
    select * from {{ ref('raw_customers__address') }}
),

renamed as (
    select
        customer_id,
        email_id,
        city,
        country,
        row_audit_ts,
        upper(trim(rec_source_status)) as rec_source_status,
        _load_date as load_date,
        _load_kind as load_kind,
        _source_file as source_file
    from source
)

select * from renamed
