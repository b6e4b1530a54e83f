-- UnicornRideRequest flattened: one column per leaf of the nested Avro records
-- (customer, recommended unicorn), enums as strings.
with

source as (
    select * from {{ ref('raw_streams__unicorn_rides') }}
),

flattened as (
    select
        source.request_id,
        source.pickup_address,
        source.destination_address,
        source.ride_fare,
        source.ride_duration,
        source.preferred_unicorn_color,
        recommended_unicorn.unicorn_id as recommended_unicorn_id,
        recommended_unicorn.color as recommended_unicorn_color,
        recommended_unicorn.stars_rating as recommended_unicorn_stars,
        customer.customer_account_no,
        customer.first_name as customer_first_name,
        customer.middle_name as customer_middle_name,
        customer.last_name as customer_last_name,
        customer.email_addresses as customer_email_addresses,
        customer.customer_address,
        customer.mode_of_payment as customer_mode_of_payment,
        customer.customer_rating,
        source._arrival_ts as arrival_ts
    from source
)

select * from flattened
