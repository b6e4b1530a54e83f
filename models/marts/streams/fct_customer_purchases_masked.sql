-- fct_customer_purchases for analysts (docs/privacy.md): every column masked
-- by its privacy tags - customerid, names and date of birth encrypted, street
-- and building number hashed, phone and ZIP code redacted.
with

purchases as (
    select * from {{ ref('fct_customer_purchases') }}
),

final as (
    select {{ privacy_masked_columns(ref('fct_customer_purchases')) }}
    from purchases
)

select * from final
