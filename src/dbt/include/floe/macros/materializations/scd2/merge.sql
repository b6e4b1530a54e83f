{#
    The one MERGE applying every pending load (floe_scd2_versions_sql): current
    rows closed (or, re-applying load 1, rows it inserted deleted and rows it
    closed re-opened), new versions inserted. One commit: a reader never sees
    part of a build's loads. `key_filter` (floe_scd2_key_filter) bounds the
    target's scan by the keys whose rows change, so Iceberg skips data files
    outside them (docs/decisions/0016-cdc-merge-pruning.md). Merge-on-read, the
    table's rows are also filtered by a Bloom filter of the versions' keys before
    the join shuffles them (floe_runtime_filter_mark, as in the cdc strategy:
    docs/decisions/0020-runtime-filtered-merges.md); Spark derives it only from
    a side it sees filtered, hence the filter every version row passes.
#}
{% macro floe_scd2_merge_sql(target, versions, columns, cfg, plan, reapply=false, key_filter='') %}
    {%- set vf, vt = cfg.valid_from, cfg.valid_to -%}
    {%- set sentinel = "date'" ~ cfg.sentinel ~ "'" -%}
    {%- set eff1 = "date'" ~ plan[0].eff ~ "'" -%}
    {{ floe_runtime_filter_mark() }}
    merge into {{ target }} as t
    using (
        select * from {{ versions }} where _scd2_row in ('match', 'insert')
    ) as s
    on s._scd2_row = 'match'
        and {{ floe_scd2_key_join('t', 's', cfg.key_cols) }}
    {%- if key_filter %}
        and {{ key_filter }}
    {%- endif %}
    {%- if reapply %}
        and (t.{{ vf }} = {{ eff1 }}
             or t.{{ vt }} = {{ sentinel }} and t.{{ vf }} < {{ eff1 }}
             or t.{{ vt }} = date_sub({{ eff1 }}, 1))
    when matched and t.{{ vf }} = {{ eff1 }} then delete
    when matched and t.{{ vt }} <> s._scd2_valid_to then update set
        t.{{ vt }} = s._scd2_valid_to
    {%- else %}
        and t.{{ vt }} = {{ sentinel }}
    when matched then update set
        t.{{ vt }} = s._scd2_valid_to
    {%- endif %}
    when not matched and s._scd2_row = 'insert' then insert (
        {{ cfg.sk }},
        {%- for c in columns.data %} {{ c }},{% endfor %}
        {{ vf }}, {{ vt }}
    ) values (
        s._scd2_sk,
        {%- for c in columns.data %} s.{{ c }},{% endfor %}
        s._scd2_valid_from, s._scd2_valid_to
    )
{% endmacro %}


{#
    A predicate on the table's key columns (alias t) that every row the MERGE
    matches satisfies: the bounds of the keys of the 'match' rows (from
    floe_scd2_counts), and their list when there are at most 1000 of them and
    the key is one column (floe_cdc_key_filter). Empty when no current row
    changes.
#}
{% macro floe_scd2_key_filter(versions, cfg, counts) %}
    {%- if counts.matched == 0 -%}{{ return('') }}{%- endif -%}
    {%- set listed = none -%}
    {%- if cfg.key_cols | length == 1 and counts.matched <= 1000 -%}
        {%- set listed = [] -%}
        {%- for r in run_query('select distinct cast(' ~ cfg.key_cols[0] ~ ' as string) from '
            ~ versions ~ " where _scd2_row = 'match'").rows -%}
            {%- do listed.append(r[0]) -%}
        {%- endfor -%}
    {%- endif -%}
    {{ return(floe_cdc_key_filter({'bounds': counts.bounds}, adapter.get_columns_in_relation(versions),
        {'unique_key': cfg.key_cols}, listed, alias='t')) }}
{% endmacro %}
