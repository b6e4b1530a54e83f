with

source as (
    select * from {{ ref('raw_streams__orders') }}
),

renamed as (
    select
        dish as item,
        cost,
        customer_id,
        _arrival_ts as arrival_ts,
        _sequence_number as sequence_number,
        _source_file as source_file
    from source
)

select * from renamed
