-- Orders enriched with the product priority valid at the order's arrival
-- (point-in-time join on the scd2 history), partitioned by item and priority
-- as the seed's sink (partitionKeys=["item", "priority"]).
{{ config(partition_by=['item', 'priority']) }}

with

orders as (
    select * from {{ ref('stg_streams__orders') }}
),

priorities as (
    select * from {{ ref('dim_product_priority') }}
),

enriched as (
    select
        o.sequence_number,
        o.arrival_ts,
        o.customer_id,
        o.cost,
        p.price,
        o.item,
        p.priority
    from orders as o
    left join priorities as p
        on
            o.item = p.item
            and {{ as_of('o.arrival_ts', 'p', 'valid_from', 'valid_to') }}
)

select * from enriched
