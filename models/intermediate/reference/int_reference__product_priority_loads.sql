-- Each reference file is a full extract of ProductPriority: one scd2 load each.
with

files as (
    select distinct
        load_date,
        source_file
    from {{ ref('stg_reference__product_priority') }}
),

final as (
    select
        load_date,
        'full' as load_kind,
        sha2(concat_ws('|', array_sort(collect_set(source_file))), 256) as fingerprint
    from files
    group by load_date
)

select * from final
