select
    cast(id as bigint) as order_id,
    customer as customer_id,
    cast(amount as decimal(10, 2)) as amount,
    status
from values
    (1, 'a', 10.5, 'paid'),
    (2, 'a', 3.0, 'paid'),
    (3, 'b', 7.25, 'open') as t (id, customer, amount, status)
