{#
    The `cdc` incremental strategy (docs/decisions/0004-cdc-merge.md): apply a
    batch of change records to an Iceberg table with one MERGE per build (or, split,
    a MATCHED-only MERGE and an append of the new keys).

    Per key, the latest change wins (order: `order_by`, descending). The order must
    be total within a key: two rows of one key equal on every order column fail
    the build instead of letting Spark pick one (the seeds' dedup kept both, and
    the MERGE then failed or went either way). Then:
        delete op, matched          -> DELETE
        delete op, not matched      -> nothing
        upsert op, matched          -> UPDATE every target column
        upsert op, not matched      -> INSERT (an update of a key never inserted
                                       is an upsert, not a silent drop)
    The op column, `_`-prefixed provenance columns and `exclude_columns` never
    reach the target. Target columns the batch lacks (a dropped or renamed
    source column) are set to NULL; new batch columns are added to the table;
    types widen only where Iceberg can (floe_schema_evolve).

    Options, in the model's `meta.cdc` (or a `cdc` config dict), over a preset:
        preset            dms | debezium | flag                  (default dms)
        op_column         column holding the op flag
        delete_ops        op values that delete
        upsert_ops        op values that insert-or-update
        null_op           upsert | fail: rows without an op (full loads)
        delete_condition  SQL that also marks a delete (Debezium `__deleted`)
        order_by          columns ordering changes of one key, oldest first
        exclude_columns   further columns kept out of the target
        watermark_column  batch column whose max is recorded after each merge
                          (see cdc_unapplied; default `_load_seq`, increasing in
                          commit order: docs/reliability.md)
        split             false (default): one MERGE, one snapshot per batch;
                          true: a MATCHED-only MERGE (broadcast batch) plus an
                          append of the new keys, two snapshots, faster
                          (docs/decisions/0016-cdc-merge-pruning.md)
        key_list_max      batches of at most this many keys (default 1000) also
                          restrict the target by an IN list of them (one-column
                          keys); 0 never lists
        buckets           N: the table is created partitioned by bucket(N, key)
                          (first key column) on a first build or full refresh,
                          and batches are staged bucketed alike for a
                          storage-partitioned MERGE (floe_cdc_apply)
#}


{#
    The whole cdc build: first build (or full refresh) creates the table from
    the batch's upserts (an empty table when the first batch is empty, so the
    model's tests and readers find it); later builds evolve the schema and
    MERGE. An empty batch on an existing table writes nothing (no snapshot, no
    property change).
#}
{% macro floe_cdc_build(target_relation, existing_relation, tmp_relation, compiled_code, on_schema_change) %}
    {%- set cfg = floe_cdc_config() -%}
    {%- set full_build = existing_relation is none or existing_relation.is_view
        or should_full_refresh() -%}

    {%- call statement('create_tmp_relation') -%}
        {{ create_table_as(True, tmp_relation, compiled_code, 'sql') }}
    {%- endcall -%}
    {%- set source_columns = adapter.get_columns_in_relation(tmp_relation) -%}
    {%- set source_names = source_columns | map(attribute='name') | map('lower') | list -%}
    {%- for required in [cfg.op_column] + cfg.unique_key + cfg.order_by -%}
        {%- if required | lower not in source_names -%}
            {{ exceptions.raise_compiler_error(
                "Model " ~ this ~ " (cdc): column '" ~ required ~ "' is not in the model's "
                ~ "rows (" ~ source_names | join(', ') ~ "); check unique_key and the cdc "
                ~ "op_column/order_by options (preset " ~ cfg.preset ~ ")") }}
        {%- endif -%}
    {%- endfor -%}
    {%- set payload = floe_cdc_payload_columns(source_columns, cfg) -%}
    {%- set watermark = cfg.watermark_column if cfg.watermark_column | lower in source_names else none -%}

    {%- if full_build -%}
        {%- if watermark -%}
            {%- set mark = run_query('select cast(max(' ~ watermark ~ ') as string) from '
                ~ tmp_relation).rows[0][0] -%}
        {%- endif -%}
        {%- if existing_relation is not none -%}
            {% do adapter.drop_relation(existing_relation) %}
        {%- endif -%}
        {%- set initial -%}
            select
            {%- for col in payload %}
                {{ adapter.quote(col.name) }}{{ ',' if not loop.last }}
            {%- endfor %}
            from ({{ floe_cdc_latest_changes(tmp_relation, payload, cfg) }}) as floe_changes
            where floe_cdc_action = 'upsert'
            {%- set sort_by = floe_option('sort_by') %}
            {%- if sort_by %}
            order by {{ (sort_by if sort_by is not string else [sort_by]) | join(', ') }}
            {%- endif %}
        {%- endset -%}
        {%- call statement('main') -%}
            {{ floe_cdc_create_sql(target_relation, initial, cfg.partition_by,
                cfg.buckets, cfg.unique_key[0]) }}
        {%- endcall -%}
        {%- do floe_apply_sort_order(target_relation) -%}
    {%- else -%}
        {#- Staged first: its one pass gives the emptiness, the counts and the
            watermark, so an empty batch costs one query over it and no table
            statement, and a non-empty one reads the batch once, not three times
            (docs/decisions/0045-pipeline-cost-curve-and-merge-choices.md). -#}
        {%- set staged = floe_cdc_stage(tmp_relation, target_relation, payload, cfg, watermark) -%}
        {%- set mark = staged.stats.watermark -%}
        {%- if staged.stats.upserts + staged.stats.deletes == 0 -%}
            {{ log(this ~ ': no new changes, nothing committed', info=False) }}
            {%- do floe_cdc_unstage(staged, cfg) -%}
            {%- call statement('main') -%}
                select 'no new rows' as floe_skipped
            {%- endcall -%}
        {%- else -%}
            {#- The table's columns, read once: when the batch's payload has exactly
                them, name for name and type for type, schema evolution has nothing
                to do under any on_schema_change, and its view and four describes
                are skipped (docs/decisions/0054-cdc-merge-near-a-quarter-of-a-rebuild.md). -#}
            {%- set target_columns = adapter.get_columns_in_relation(target_relation) -%}
            {%- if not floe_cdc_same_columns(payload, target_columns) -%}
                {%- set payload_view = make_temp_relation(this, '__cdc_payload').include(database=false, schema=false) -%}
                {%- call statement('create_payload_view') -%}
                    create or replace temporary view {{ payload_view }} as
                    select
                    {%- for col in payload %}
                        {{ adapter.quote(col.name) }}{{ ',' if not loop.last }}
                    {%- endfor %}
                    from {{ tmp_relation }}
                {%- endcall -%}
                {%- do floe_schema_evolve(on_schema_change, payload_view, existing_relation) -%}
                {%- call statement('drop_payload_view') -%}
                    drop view if exists {{ payload_view }}
                {%- endcall -%}
                {%- set target_columns = adapter.get_columns_in_relation(target_relation) -%}
            {%- endif -%}
            {%- do floe_sync_table_properties(target_relation) -%}
            {%- do floe_cdc_apply(staged, target_relation, target_columns, payload, cfg) -%}
            {%- do floe_cdc_unstage(staged, cfg) -%}
        {%- endif -%}
    {%- endif -%}
    {%- if watermark and mark -%}
        {%- call statement('record_watermark') -%}
            alter table {{ target_relation }}
            set tblproperties (
                'floe.cdc.watermark' = {{ floe_string_literal(mark) }},
                'floe.cdc.watermark_column' = {{ floe_string_literal(watermark | lower) }}
            )
        {%- endcall -%}
    {%- endif -%}
    {%- call statement('drop_tmp_relation') -%}
        drop view if exists {{ tmp_relation }}
    {%- endcall -%}
{% endmacro %}


{#
    True when `payload` (the batch's columns bound for the table) and
    `target_columns` (the table's) are the same columns with the same types,
    compared case-insensitively and ignoring spaces in type names.
#}
{% macro floe_cdc_same_columns(payload, target_columns) %}
    {%- set source_types, target_types = {}, {} -%}
    {%- for col in payload -%}
        {%- do source_types.update({col.name | lower: col.dtype | lower | replace(' ', '')}) -%}
    {%- endfor -%}
    {%- for col in target_columns -%}
        {%- do target_types.update({col.name | lower: col.dtype | lower | replace(' ', '')}) -%}
    {%- endfor -%}
    {{ return(source_types == target_types) }}
{% endmacro %}


{#
    The replica's CTAS: dbt-spark's, with the partitioning that may come from
    the feed declaration (floe_cdc_config) rather than the model config,
    plus `bucket(buckets, key)` when the model asks for `cdc.buckets`.
#}
{% macro floe_cdc_create_sql(relation, sql, partition_by, buckets=none, key=none) %}
    create table {{ relation }}
    {{ file_format_clause() }}
    {%- set partitions = floe_cdc_partitions(partition_by, buckets, key) -%}
    {%- if partitions %}
    partitioned by ({{ partitions | join(', ') }})
    {%- endif %}
    {{ location_clause() }}
    {{ comment_clause() }}
    {{ floe__tblproperties_clause() }}
    as
    {{ sql }}
{% endmacro %}


{#
    Stage a batch (docs/decisions/0016-cdc-merge-pruning.md): the latest change
    per key, once (the window over the batch runs once; a tie, NULL key or
    unknown op fails here): cached (lazily, filled by the stats pass), or, for
    a table bucketed by its key
    (`cdc.buckets`), written as a scratch Iceberg table with the same
    partitioning, so the MERGE joins bucket to bucket with no shuffle
    (storage-partitioned join: the statements carry
    `/* floe:storage_partitioned_join */`, docs/runtime.md). Then one pass over
    it (floe_cdc_batch_stats): upsert and delete counts (both 0: the batch is
    empty), each key column's bounds and the batch's watermark. Returns
    {latest, changes, stats}; free with floe_cdc_unstage.
#}
{% macro floe_cdc_stage(source, target_relation, payload, cfg, watermark=none) %}
    {%- set latest = make_temp_relation(this, '__cdc_changes').include(database=false, schema=false) -%}
    {%- call statement('stage_changes') -%}
        create or replace temporary view {{ latest }} as
        {{ floe_cdc_latest_changes(source, payload, cfg, watermark) }}
    {%- endcall -%}
    {%- if cfg.buckets -%}
        {%- set changes = api.Relation.create(schema=target_relation.schema,
            identifier=target_relation.identifier ~ '__cdc_batch', type='table') -%}
        {#- a scratch table of its own: none of the model's location or properties -#}
        {%- call statement('stage_changes_bucketed') -%}
            create or replace table {{ changes }}
            using iceberg
            partitioned by ({{ floe_cdc_partitions(cfg.partition_by, cfg.buckets,
                cfg.unique_key[0]) | join(', ') }})
            tblproperties ('format-version' = '2')
            as select * from {{ latest }}
        {%- endcall -%}
    {%- else -%}
        {%- set changes = latest -%}
        {#- Lazy: the stats query below fills the cache in its own pass, so the
            window over the batch and the count run as one job, not an eager
            cache's job and then a second over the cached rows. Uncached, the
            MERGE would run the window again on each read of its source (the Bloom
            filter's subquery, then the join), and it was several times slower
            (docs/decisions/0054-cdc-merge-near-a-quarter-of-a-rebuild.md). -#}
        {%- call statement('cache_changes') -%}
            cache lazy table {{ changes }}
        {%- endcall -%}
    {%- endif -%}
    {{ return({'latest': latest, 'changes': changes,
               'stats': floe_cdc_batch_stats(changes, cfg, watermark is not none)}) }}
{% endmacro %}


{% macro floe_cdc_unstage(staged, cfg) %}
    {%- if cfg.buckets -%}
        {%- call statement('drop_changes_table') -%}
            drop table if exists {{ staged.changes }} purge
        {%- endcall -%}
    {%- else -%}
        {%- call statement('drop_changes') -%}
            uncache table if exists {{ staged.changes }}
        {%- endcall -%}
    {%- endif -%}
    {%- call statement('drop_changes_view') -%}
        drop view if exists {{ staged.latest }}
    {%- endcall -%}
{% endmacro %}


{#
    Apply a staged, non-empty batch (floe_cdc_stage) to an existing table
    (docs/decisions/0016-cdc-merge-pruning.md): the key list when the batch is
    small (floe_cdc_key_filter) bounds the target's scan to the files the batch
    can touch; then, `cdc.split` (default false) and upserts present, a
    MATCHED-only MERGE (broadcast batch) and an append of the upserts whose key
    the table does not hold; else the one MERGE with deletes, updates and
    inserts. Split, the batch commits as two snapshots; the final table is the
    same.
#}
{% macro floe_cdc_apply(staged, target_relation, target_columns, payload, cfg) %}
    {%- set changes, stats = staged.changes, staged.stats -%}
    {%- set listed = none -%}
    {%- set batch_keys = stats.upserts + stats.deletes -%}
    {%- if cfg.unique_key | length == 1 and 0 < batch_keys <= cfg.key_list_max -%}
        {%- set listed = [] -%}
        {%- for r in run_query('select cast(' ~ cfg.unique_key[0] ~ ' as string) from '
            ~ changes).rows -%}
            {%- do listed.append(r[0]) -%}
        {%- endfor -%}
    {%- endif -%}
    {%- set key_filter = floe_cdc_key_filter(stats, target_columns, cfg, listed) -%}
    {%- set split = cfg.split and stats.upserts > 0 -%}
    {%- call statement('main') -%}
        {{ floe_cdc_merge_sql(changes, target_relation, target_columns, payload, cfg,
            key_filter, matched_only=split) }}
    {%- endcall -%}
    {%- if split -%}
        {%- call statement('append_new_keys') -%}
            {{ floe_cdc_append_sql(changes, target_relation, target_columns, payload, cfg, key_filter) }}
        {%- endcall -%}
    {%- endif -%}
{% endmacro %}


{#- The replica's partition transforms: the feed's or the model's, then bucket(N, key). -#}
{% macro floe_cdc_partitions(partition_by, buckets=none, key=none) %}
    {%- set partitions = (partition_by or []) | list -%}
    {%- if buckets -%}
        {%- set partitions = partitions + ['bucket(' ~ buckets ~ ', ' ~ key ~ ')'] -%}
    {%- endif -%}
    {{ return(partitions) }}
{% endmacro %}
