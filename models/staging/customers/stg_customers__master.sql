with

source as (
    select * from {{ ref('raw_customers__master') }}
),

renamed as (
    select
        customer_id,
        first_name,
        last_name,
        employer_name,
        row_audit_ts,
        upper(trim(rec_source_status)) as rec_source_status,
        _load_date as load_date,
        _load_kind as load_kind,
        _source_file as source_file
    from source
)

select * from renamed
