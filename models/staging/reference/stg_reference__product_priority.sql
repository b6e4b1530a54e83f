with

source as (
    select * from {{ ref('raw_reference__product_priority') }}
),

renamed as (
    select
        item,
        price,
        priority,
        updated_at,
        _load_date as load_date,
        _source_file as source_file
    from source
)

select * from renamed
