{#
    incremental_strategy 'microbatch' on Iceberg: each batch replaces exactly
    its event-time window [event_time_start, event_time_end) in ONE commit,
    without partition_by (docs/decisions/0026-microbatch-window-merge.md).

    dbt runs the model once per batch (batch_size, lookback, begin,
    --event-time-start/--event-time-end, `dbt retry` of failed batches) and
    filters every ref/source that has an event_time to the batch's window;
    this macro writes one batch: a MERGE whose source is the batch's rows
    (inserted) plus the distinct rows the table holds in the window (matched
    on the window predicate and their whole row, deleted). Iceberg prunes
    the target to the window's files and rewrites only files holding window
    rows. A batch with a row outside its window fails before anything is
    written; a batch equal to what the window holds commits nothing.
#}
{% macro floe_microbatch_replace(tmp_relation, target_relation) %}
    {%- set event_time = config.get('event_time') -%}
    {%- if not event_time -%}
        {{ exceptions.raise_compiler_error(
            "Model " ~ this ~ ": incremental_strategy 'microbatch' needs event_time "
            ~ "(the column that places each row in a batch)") }}
    {%- endif -%}
    {%- set batch = model.get('batch') -%}
    {%- if not batch -%}
        {{ exceptions.raise_compiler_error(
            "Model " ~ this ~ ": a microbatch model runs through dbt's batches (dbt run/build)") }}
    {%- endif -%}
    {%- set start = "timestamp'" ~ batch['event_time_start'].strftime('%Y-%m-%d %H:%M:%S') ~ "'" -%}
    {%- set end = "timestamp'" ~ batch['event_time_end'].strftime('%Y-%m-%d %H:%M:%S') ~ "'" -%}
    {%- set et = adapter.quote(event_time) -%}
    {%- set in_window = et ~ ' >= ' ~ start ~ ' and ' ~ et ~ ' < ' ~ end -%}
    {%- set columns = adapter.get_columns_in_relation(target_relation) -%}
    {%- set names = columns | map(attribute='name') | map('lower') | list -%}
    {%- if event_time | lower not in names -%}
        {{ exceptions.raise_compiler_error(
            "Model " ~ this ~ ": event_time column '" ~ event_time ~ "' is not a column of "
            ~ target_relation) }}
    {%- endif -%}
    {%- set quoted = [] -%}
    {%- for col in columns -%}{%- do quoted.append(adapter.quote(col.name)) -%}{%- endfor -%}
    {%- set dest_quoted = [] -%}
    {%- for q in quoted -%}{%- do dest_quoted.append('dest.' ~ q) -%}{%- endfor -%}
    {%- set row_json = 'to_json(struct(' ~ quoted | join(', ') ~ '))' -%}
    {%- set dest_json = 'to_json(struct(' ~ dest_quoted | join(', ') ~ '))' -%}

    {%- call statement('microbatch_check', fetch_result=True) -%}
        select
            (select count(*) from {{ tmp_relation }}
             where {{ et }} is null or not ({{ in_window }})) as outside,
            (select count(*) from (
                select {{ quoted | join(', ') }} from {{ tmp_relation }}
                except all
                select {{ quoted | join(', ') }} from {{ target_relation }} where {{ in_window }}
            )) as added,
            (select count(*) from (
                select {{ quoted | join(', ') }} from {{ target_relation }} where {{ in_window }}
                except all
                select {{ quoted | join(', ') }} from {{ tmp_relation }}
            )) as removed
    {%- endcall -%}
    {%- set found = load_result('microbatch_check')['data'][0] -%}
    {%- if found[0] > 0 -%}
        {{ exceptions.raise_compiler_error(
            "Model " ~ this ~ ": batch " ~ batch['id'] ~ " has " ~ found[0]
            ~ " rows whose " ~ event_time ~ " is NULL or outside its window ["
            ~ batch['event_time_start'] ~ ", " ~ batch['event_time_end']
            ~ "): a microbatch model must keep each row in the batch its inputs came from") }}
    {%- endif -%}
    {%- if found[1] == 0 and found[2] == 0 -%}
        {{ log(this ~ ': batch ' ~ batch['id'] ~ ' unchanged, nothing committed', info=False) }}
        {%- call statement('main') -%}
            select 'batch unchanged' as floe_skipped
        {%- endcall -%}
        {{ return(none) }}
    {%- endif -%}
    {%- call statement('main') -%}
        merge into {{ target_relation }} as dest
        using (
            select {{ quoted | join(', ') }}, {{ row_json }} as _floe_row, false as _floe_old
            from {{ tmp_relation }}
            union all
            select distinct {{ quoted | join(', ') }}, {{ row_json }}, true
            from {{ target_relation }}
            where {{ in_window }}
        ) as batch
        on batch._floe_old
            and dest.{{ et }} >= {{ start }} and dest.{{ et }} < {{ end }}
            and {{ dest_json }} = batch._floe_row
        when matched then delete
        when not matched and not batch._floe_old then insert ({{ quoted | join(', ') }})
        values (
            {%- for q in quoted -%}batch.{{ q }}{{ ', ' if not loop.last }}{%- endfor -%}
        )
    {%- endcall -%}
{% endmacro %}
