{#
    One load against the current table: keys tagged I/U/D/N and staged as the
    MERGE input (a cached temporary view), plus the helpers that build it.
#}
{% macro floe_scd2_hash(alias, tracked) -%}
    sha2(to_json(named_struct(
        {%- for c in tracked %}'{{ c }}', {{ alias }}.{{ c }}{{ ', ' if not loop.last }}{% endfor -%}
    )), 256)
{%- endmacro %}


{% macro floe_scd2_key_join(left, right, keys) -%}
    {%- for k in keys %}{{ left }}.{{ k }} = {{ right }}.{{ k }}{{ ' and ' if not loop.last }}{% endfor -%}
{%- endmacro %}


{% macro floe_scd2_stage(target, src_view, columns, cfg, eff, full_extract, reapply) %}
    {#-
        Tag each key against the table as it was before this load (P) and stage
        the MERGE input: one 'match' row per key to expire (U, D) or, when the
        load is applied again (a late file, a same-day correction), per key
        the earlier application touched, so that it is rolled back; and one
        'insert' row per new version, numbered max(sk of P) + 1.. in key order.
        Re-applying a load therefore yields exactly what applying its final
        content once yields, which is what a full refresh does.
    -#}
    {%- set view = make_temp_relation(this, '__scd2_changes').include(database=false, schema=false) -%}
    {%- set deleted = 's._scd2_deleted' if columns.flags_deletes else 'false' -%}
    {%- set k0 = cfg.key_cols[0] -%}
    {%- set vf, vt = cfg.valid_from, cfg.valid_to -%}
    {%- set day_before = "date_sub(date'" ~ eff ~ "', 1)" -%}
    {%- call statement('stage') -%}
        create or replace temporary view {{ view }} as
        with
        src as (
            select s.*, coalesce({{ deleted }}, false) as _scd2_del
            from {{ src_view }} as s
        ),
        cur as (
            {#- The current rows of P: what was current before this load. Hashes are
                computed after the join, so a change load hashes only the keys it touched. -#}
            select t.*
            from {{ target }} as t
            where t.{{ vt }} = date'{{ cfg.sentinel }}'
            {%- if reapply %}
                and t.{{ vf }} < date'{{ eff }}'
                or t.{{ vt }} = {{ day_before }}
            {%- endif %}
        ),
        {%- if reapply %}
        footprint as (
            select distinct {{ cfg.key_cols | join(', ') }}
            from {{ target }}
            where {{ vf }} = date'{{ eff }}' or {{ vt }} = {{ day_before }}
        ),
        {%- endif %}
        tagged as (
            select
                {%- for k in cfg.key_cols %}
                coalesce(s.{{ k }}, c.{{ k }}) as {{ k }},
                {%- endfor %}
                {%- for a in columns.attrs %}
                s.{{ a }},
                {%- endfor %}
                case
                    when c.{{ k0 }} is null and (s.{{ k0 }} is null or s._scd2_del) then 'N'
                    when c.{{ k0 }} is null then 'I'
                    when s.{{ k0 }} is null then {{ "'D'" if full_extract else "'N'" }}
                    when s._scd2_del then 'D'
                    when {{ floe_scd2_hash('s', columns.tracked) }}
                        <> {{ floe_scd2_hash('c', columns.tracked) }} then 'U'
                    else 'N'
                end as _scd2_op
            from src as s
            {{ 'full outer' if full_extract else 'left' }} join cur as c
                on {{ floe_scd2_key_join('s', 'c', cfg.key_cols) }}
        ),
        max_sk as (
            select coalesce(max({{ cfg.sk }}), 0) as max_sk
            from {{ target }}
            {%- if reapply %}
            where {{ vf }} < date'{{ eff }}'
            {%- endif %}
        )
        select 'match' as _scd2_row, t.*, cast(null as bigint) as _scd2_sk
        from tagged as t
        where t._scd2_op in ('U', 'D')
        {%- if reapply %}
        union all
        select 'match' as _scd2_row, t.*, cast(null as bigint) as _scd2_sk
        from tagged as t
        left semi join footprint as f on {{ floe_scd2_key_join('t', 'f', cfg.key_cols) }}
        where t._scd2_op in ('N', 'I')
        union all
        {#- footprint keys the new content no longer mentions: rolled back too #}
        select 'match' as _scd2_row,
            {%- for k in cfg.key_cols %} f.{{ k }},{% endfor %}
            {%- for a in columns.attrs %} null as {{ a }},{% endfor %}
            'N' as _scd2_op, cast(null as bigint) as _scd2_sk
        from footprint as f
        left anti join tagged as t on {{ floe_scd2_key_join('f', 't', cfg.key_cols) }}
        {%- endif %}
        union all
        select 'insert' as _scd2_row, t.*,
            m.max_sk + row_number() over (
                order by {% for k in cfg.key_cols %}t.{{ k }}{{ ', ' if not loop.last }}{% endfor %}
            ) as _scd2_sk
        from tagged as t
        cross join max_sk as m
        where t._scd2_op in ('I', 'U')
    {%- endcall -%}
    {#- Computed once: the counts below and the MERGE read the cached rows. -#}
    {%- call statement('cache_stage') -%}
        cache table {{ view }}
    {%- endcall -%}
    {%- set counts = run_query(
        "select _scd2_row, _scd2_op, count(*) from " ~ view ~ " group by 1, 2") -%}
    {%- set c = {'inserted': 0, 'changed': 0, 'deleted': 0, 'rolled_back': 0} -%}
    {%- set total = namespace(n=0) -%}
    {%- for r in counts -%}
        {%- set total.n = total.n + r[2] -%}
        {%- if r[0] == 'insert' and r[1] == 'I' -%}{%- do c.update({'inserted': c.inserted + r[2]}) -%}
        {%- elif r[0] == 'match' and r[1] == 'U' -%}{%- do c.update({'changed': c.changed + r[2]}) -%}
        {%- elif r[0] == 'match' and r[1] == 'D' -%}{%- do c.update({'deleted': c.deleted + r[2]}) -%}
        {%- elif r[0] == 'match' -%}{%- do c.update({'rolled_back': c.rolled_back + r[2]}) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return({'view': view, 'total': total.n, 'counts': c}) }}
{% endmacro %}
