-- fct_orders for analysts (docs/privacy.md): every column masked by its
-- privacy tags - customer_id encrypted (it joins the other masked marts).
with

orders as (
    select * from {{ ref('fct_orders') }}
),

final as (
    select {{ privacy_masked_columns(ref('fct_orders')) }}
    from orders
)

select * from final
