{#
    The MERGE of one batch: its latest change per key, staged by floe_cdc_build
    as `changes` (floe_cdc_latest_changes), against the target. Every target
    column is assigned: from the batch when it has the column, else NULL (a
    source column dropped upstream stays in the table and reads NULL for rows
    written since). Keys are never updated.

    `key_filter`: SQL on floe_target alone (floe_cdc_key_filter), ANDed into
    the ON clause: Spark pushes it into the target's scan, so Iceberg skips data
    files whose key bounds miss the batch (docs/decisions/0016-cdc-merge-pruning.md).

    `matched_only`: no INSERT clause. Spark then joins the target with the
    batch by an inner (merge-on-read) or left outer (copy-on-write) join and
    broadcasts the batch; with an INSERT clause the batch is the preserved side
    of an outer join, which cannot be broadcast, and both sides are shuffled.
    The new keys are then appended by floe_cdc_append_sql.

    Merge-on-read, the table's rows are filtered by a Bloom filter of the
    batch's keys before they are shuffled for the join (Spark's runtime filter,
    asked for by floe_runtime_filter_mark; docs/decisions/0020-runtime-filtered-merges.md),
    so only rows that may match reach the shuffle. Spark derives that filter
    only from a join side it sees filtered: the source is the batch under a
    filter every staged row passes.
#}
{% macro floe_cdc_merge_sql(changes, target_relation, target_columns, payload, cfg, key_filter='', matched_only=false) %}
    {%- set keys = cfg.unique_key | map('lower') | list -%}
    {%- set assignments = floe_cdc_assignments(target_columns, payload) -%}
    {%- if cfg.buckets %}
    /* floe:storage_partitioned_join */
    {%- elif not matched_only %}
    {{ floe_runtime_filter_mark() }}
    {%- endif %}
    merge into {{ target_relation }} as floe_target
    using (
        select * from {{ changes }} where floe_cdc_action in ('delete', 'upsert')
    ) as floe_source
    on
    {%- for k in cfg.unique_key %}
        floe_target.{{ k }} = floe_source.{{ k }}{{ ' and' if not loop.last }}
    {%- endfor %}
    {%- if key_filter %}
        and {{ key_filter }}
    {%- endif %}
    when matched and floe_source.floe_cdc_action = 'delete' then delete
    when matched then update set
    {%- for name, value in assignments if name | lower not in keys %}
        {{ '' if loop.first else ',' }}floe_target.{{ adapter.quote(name) }} = {{ value }}
    {%- endfor %}
    {%- if not matched_only %}
    when not matched and floe_source.floe_cdc_action = 'upsert' then insert (
    {%- for name, value in assignments %}
        {{ adapter.quote(name) }}{{ ',' if not loop.last }}
    {%- endfor %}
    ) values (
    {%- for name, value in assignments %}
        {{ value }}{{ ',' if not loop.last }}
    {%- endfor %}
    )
    {%- endif %}
{% endmacro %}


{#
    The second half of a split upsert: the batch's upserts whose key the table
    does not hold, appended. Run after the MATCHED-only MERGE, which updated
    every upsert of a held key and inserted none, so "not held" is exactly the
    keys the one MERGE would have inserted. The held keys are found by streaming
    the target's key columns against the (broadcast) batch, never the reverse.
#}
{% macro floe_cdc_append_sql(changes, target_relation, target_columns, payload, cfg, key_filter='') %}
    {%- set assignments = floe_cdc_assignments(target_columns, payload) -%}
    {%- set keys = cfg.unique_key -%}
    {%- if cfg.buckets %}
    /* floe:storage_partitioned_join */
    {%- endif %}
    insert into {{ target_relation }} (
    {%- for name, value in assignments %}
        {{ adapter.quote(name) }}{{ ',' if not loop.last }}
    {%- endfor %}
    )
    select
    {%- for name, value in assignments %}
        {{ value }}{{ ',' if not loop.last }}
    {%- endfor %}
    from {{ changes }} as floe_source
    left anti join (
        select {% for k in keys %}floe_target.{{ k }}{{ ', ' if not loop.last }}{% endfor %}
        from {{ target_relation }} as floe_target
        left semi join {{ changes }} as floe_batch
            on
            {%- for k in keys %}
            floe_target.{{ k }} = floe_batch.{{ k }}{{ ' and' if not loop.last }}
            {%- endfor %}
        {%- if key_filter %}
        where {{ key_filter }}
        {%- endif %}
    ) as floe_held
        on
        {%- for k in keys %}
        floe_source.{{ k }} = floe_held.{{ k }}{{ ' and' if not loop.last }}
        {%- endfor %}
    where floe_source.floe_cdc_action = 'upsert'
{% endmacro %}


{# (target column, value) pairs: the batch's column, or NULL for one it no longer sends. #}
{% macro floe_cdc_assignments(target_columns, payload) %}
    {%- set available = payload | map(attribute='name') | map('lower') | list -%}
    {%- set assignments = [] -%}
    {%- for col in target_columns -%}
        {%- if col.name | lower in available -%}
            {%- do assignments.append((col.name, 'floe_source.' ~ adapter.quote(col.name))) -%}
        {%- else -%}
            {#- a column the source no longer sends: NULL for new rows, never dropped -#}
            {%- do assignments.append((col.name, 'cast(null as ' ~ col.dtype ~ ')')) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(assignments) }}
{% endmacro %}


{#
    A predicate on the target's key columns alone that every row the batch can
    match satisfies: each key column between the batch's least and greatest
    value, and, for a one-column key and at most `key_list_max` keys, the key in
    the batch's list. Iceberg prunes data files by their key bounds with it:
    data clustered or sorted by key (sort_by) skips the files the batch misses;
    keys scattered over every file prune nothing (docs/decisions/0016-cdc-merge-pruning.md).
    `stats` is floe_cdc_batch_stats; values are written as hex literals cast
    to the key's type (floe_value_literal), never pasted. The scd2 MERGE uses it
    too (alias `t`, floe_scd2_key_filter).
#}
{% macro floe_cdc_key_filter(stats, target_columns, cfg, listed=none, alias='floe_target') %}
    {%- set types = {} -%}
    {%- for col in target_columns -%}
        {%- do types.update({col.name | lower: col.dtype}) -%}
    {%- endfor -%}
    {%- set terms = [] -%}
    {%- for k in cfg.unique_key -%}
        {%- set dtype = types.get(k | lower) -%}
        {%- set bounds = stats.bounds.get(k | lower) -%}
        {%- if dtype and bounds and bounds[0] is not none and bounds[1] is not none -%}
            {%- do terms.append(alias ~ '.' ~ k ~ ' between ' ~ floe_value_literal(bounds[0], dtype)
                ~ ' and ' ~ floe_value_literal(bounds[1], dtype)) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if listed -%}
        {%- set k = cfg.unique_key[0] -%}
        {%- set dtype = types.get(k | lower) -%}
        {%- set values = [] -%}
        {%- for v in listed -%}
            {%- do values.append(floe_value_literal(v, dtype)) -%}
        {%- endfor -%}
        {%- do terms.append(alias ~ '.' ~ k ~ ' in (' ~ values | join(', ') ~ ')') -%}
    {%- endif -%}
    {{ return(terms | join(' and ')) }}
{% endmacro %}


{#
    One pass over the staged batch: how many upserts and deletes, each key
    column's least and greatest value (as strings, for floe_cdc_key_filter)
    and, with `watermark`, the batch's watermark (floe_cdc_latest_changes).
#}
{% macro floe_cdc_batch_stats(changes, cfg, watermark=false) %}
    {%- set sql -%}
        select
            count_if(floe_cdc_action = 'upsert'),
            count_if(floe_cdc_action = 'delete'),
            {{ 'cast(max(floe_cdc_watermark) as string)' if watermark else 'cast(null as string)' }}
            {%- for k in cfg.unique_key %},
            cast(min({{ k }}) as string), cast(max({{ k }}) as string)
            {%- endfor %}
        from {{ changes }}
    {%- endset -%}
    {%- set row = run_query(sql).rows[0] -%}
    {%- set bounds = {} -%}
    {%- for k in cfg.unique_key -%}
        {%- do bounds.update({k | lower: (row[3 + 2 * loop.index0], row[4 + 2 * loop.index0])}) -%}
    {%- endfor -%}
    {{ return({'upserts': row[0] or 0, 'deletes': row[1] or 0, 'watermark': row[2],
               'bounds': bounds}) }}
{% endmacro %}
