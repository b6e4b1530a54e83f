-- Records in = decoded + quarantined, per landed file, counted from the tables
-- themselves (not from the manifest's own counts): a lost or duplicated record
-- makes `is_balanced` false and fails the build through its data test.
with

raw_counts as (
    {% for stream in ['ventilator', 'unicorn_rides', 'weather', 'movies_cdc',
                      'customer_events', 'orders'] %}
        select
            '{{ stream }}' as stream,
            _source_file,
            count(*) as decoded_rows
        from {{ ref('raw_streams__' ~ stream) }}
        group by _source_file
        {% if not loop.last %}union all{% endif %}
    {% endfor %}
),

quarantine_counts as (
    select
        stream,
        _source_file,
        count(*) as quarantined_rows
    from {{ source('floe_ingest', 'quarantine') }}
    group by stream, _source_file
),

manifest as (
    select * from {{ source('floe_ingest', 'stream_files') }}
),

final as (
    select
        m.stream,
        m._source_file,
        m.records_in,
        coalesce(r.decoded_rows, 0) as decoded_rows,
        coalesce(q.quarantined_rows, 0) as quarantined_rows,
        m.records_in
        = coalesce(r.decoded_rows, 0) + coalesce(q.quarantined_rows, 0) as is_balanced
    from manifest as m
    left join raw_counts as r
        on m.stream = r.stream and m._source_file = r._source_file
    left join quarantine_counts as q
        on m.stream = q.stream and m._source_file = q._source_file
)

select * from final
