-- Customer purchase events typed as the seed's icebergdemodb.customer DDL.
with

source as (
    select * from {{ ref('raw_streams__customer_events') }}
),

typed as (
    select
        year,
        month,
        day,
        hour,
        minute,
        cast(customerid as string) as customerid,
        firstname,
        lastname,
        dateofbirth,
        city,
        cast(buildingnumber as string) as buildingnumber,
        streetaddress,
        state,
        zipcode,
        country,
        countrycode,
        phonenumber,
        productname,
        cast(transactionamount as int) as transactionamount,
        _ingested_at,
        _load_seq
    from source
)

select * from typed
