-- History of ProductPriority (docs/scd2.md): one scd2 load per reference extract,
-- day grain (valid_to inclusive), so as_of() picks the priority of an order's day.
{{ config(
    materialized='scd2',
    unique_key='item',
    scd2_loads='int_reference__product_priority_loads',
    surrogate_key='product_priority_sk',
    tracked_columns=['price', 'priority'],
    initial_eff_date='1900-01-01',
) }}
-- depends_on: {{ ref('int_reference__product_priority_loads') }}

with

extract as (
    select
        item,
        price,
        priority
    from {{ ref('stg_reference__product_priority') }}
    where load_date = {{ floe_scd2_load_date() }}
)

select * from extract
