{% snapshot dim_snapshot %}
{{ config(
    target_schema='bench', unique_key='customer_id', strategy='check',
    check_cols=['first_name', 'last_name', 'employer_name', 'email_id', 'city', 'country'],
    hard_deletes='invalidate', file_format='iceberg',
) }}
select customer_id, first_name, last_name, employer_name, email_id, city, country
from bench.src_state
where load_date = cast('{{ var("bench_load_date") }}' as date)
{% endsnapshot %}
