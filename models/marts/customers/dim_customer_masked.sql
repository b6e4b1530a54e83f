-- dim_customer for analysts (docs/privacy.md): every column masked by its
-- privacy tags - customer_id and names encrypted (they still join), e-mail
-- and employer hashed.
with

customers as (
    select * from {{ ref('dim_customer') }}
),

final as (
    select {{ privacy_masked_columns(ref('dim_customer')) }}
    from customers
)

select * from final
