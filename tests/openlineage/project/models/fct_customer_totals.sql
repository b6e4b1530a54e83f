with orders as (select * from {{ ref('stg_orders') }}),

final as (
    select
        customer_id,
        count(*) as order_count,
        sum(amount) as total_amount,
        upper(max(status)) as last_status
    from orders
    where status != 'void'
    group by customer_id
)

select * from final
