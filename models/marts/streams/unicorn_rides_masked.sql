-- unicorn_rides for analysts (docs/privacy.md): every column masked by its
-- privacy tags - account number encrypted, the customer's names, e-mails and
-- addresses hashed.
with

rides as (
    select * from {{ ref('unicorn_rides') }}
),

final as (
    select {{ privacy_masked_columns(ref('unicorn_rides')) }}
    from rides
)

select * from final
