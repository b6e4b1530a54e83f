{#
    Every pending load applied in one set-based statement (docs/scd2.md).

    Each key's history over the pending loads is a sequence of events ordered
    by load: its current row before them (load 0, from the table) and its
    version in each load that carries it (present, or deleted by the model's
    `_scd2_deleted`). A full extract that leaves out a key present before it
    deletes the key there (`_scd2_gone_at`). Window functions over that
    sequence tag every event against the state before it:
        I  the key did not exist and is present now   -> a new version
        U  it existed with other values of the tracked columns -> the version
           before ends, a new one opens
        D  it existed and is deleted (flag, or absent from a full extract)
        N  nothing changes
    A version opened at load i (or the current row, for load 0) ends the day
    before the next U or D of its key, else it stays current. Surrogate keys
    continue from the table's largest one, numbered by load, then key: what
    applying the loads one at a time numbers.

    Output: the MERGE source (floe_scd2_merge_sql) or, for an empty table, the
    rows of the CREATE TABLE AS: one 'match' row per current row whose
    valid_to changes, one 'insert' row per new version with its surrogate key,
    valid_from and valid_to.

    `reapply`: load 1 was applied before with other files (a file landed late
    into it); the table is read as it was before that application (rows it
    inserted dropped, rows it expired current again, surrogate keys from
    before it), so re-applying equals applying the final content once, which
    is what a full refresh does.
#}
{% macro floe_scd2_versions_sql(target, src_view, columns, cfg, plan, reapply=false) %}
    {%- set keys = cfg.key_cols | join(', ') -%}
    {%- set vf, vt = cfg.valid_from, cfg.valid_to -%}
    {%- set n = plan | length -%}
    {%- set sentinel = "date'" ~ cfg.sentinel ~ "'" -%}
    {%- set eff1 = "date'" ~ plan[0].eff ~ "'" -%}
    {%- set dated = [] -%}
    {%- set effs = [] -%}
    {%- for p in plan -%}
        {%- do dated.append(floe_string_literal(p.date)) -%}
        {%- do effs.append("date'" ~ p.eff ~ "'") -%}
    {%- endfor -%}
    {#- next_full[i] (i = 0..n): the first full extract after load i; n + 1 when none. -#}
    {%- set next_full = [] -%}
    {%- for i in range(n + 1) -%}
        {%- set later = [] -%}
        {%- for p in plan if p.idx > i and p.full -%}{%- do later.append(p.idx) -%}{%- endfor -%}
        {%- do next_full.append(later[0] if later else n + 1) -%}
    {%- endfor -%}
    {%- set next_full = 'array(' ~ next_full | join(', ') ~ ')' -%}
    {%- set any_full = plan | selectattr('full') | list | length > 0 -%}
    {%- set window = 'partition by ' ~ keys ~ ' order by _scd2_load' -%}
    {%- set duplicate = [floe_string_literal(this ~ ': the model returned two rows for key (')] -%}
    {%- for k in cfg.key_cols -%}
        {%- do duplicate.append('coalesce(cast(s.' ~ k ~ " as string), 'NULL')") -%}
        {%- if not loop.last %}{%- do duplicate.append("', '") -%}{%- endif -%}
    {%- endfor -%}
    {%- do duplicate.append(floe_string_literal(') in load '))
        -%}
    {%- do duplicate.append('element_at(array(' ~ dated | join(', ') ~ '), s._scd2_load)') -%}
    {%- do duplicate.append(floe_string_literal('; a scd2 model returns one row per key and load')) -%}
    with
    src as (
        select
            {%- for k in cfg.key_cols %}
            s.{{ k }},
            {%- endfor %}
            {%- for a in columns.attrs %}
            s.{{ a }},
            {%- endfor %}
            s._scd2_load,
            {{ 'not coalesce(s._scd2_deleted, false)' if columns.flags_deletes else 'true' }}
                as _scd2_present,
            {{ floe_scd2_tracked('s', columns.tracked) }} as _scd2_tracked
        from {{ src_view }} as s
    ),
    {%- if target is not none %}
    {%- if reapply %}
    footprint as (
        {# keys the earlier application of load 1 inserted or expired #}
        select distinct {{ keys }}
        from {{ target }}
        where {{ vf }} = {{ eff1 }} or {{ vt }} = date_sub({{ eff1 }}, 1)
    ),
    {%- endif %}
    base as (
        {# The current rows before the pending loads. Only the keys the loads
            carry when none is a full extract: the target is read for them alone. #}
        select
            {%- for k in cfg.key_cols %}
            t.{{ k }},
            {%- endfor %}
            {{ floe_scd2_tracked('t', columns.tracked) }} as _scd2_tracked
        from {{ target }} as t
        {%- if not any_full %}
        left semi join (
            select {{ keys }} from src
            {%- if reapply %}
            union
            select {{ keys }} from footprint
            {%- endif %}
        ) as k
            on {{ floe_scd2_key_join('t', 'k', cfg.key_cols) }}
        {%- endif %}
        where
        {%- if reapply %}
            t.{{ vt }} = {{ sentinel }} and t.{{ vf }} < {{ eff1 }}
            or t.{{ vt }} = date_sub({{ eff1 }}, 1)
        {%- else %}
            t.{{ vt }} = {{ sentinel }}
        {%- endif %}
    ),
    max_sk as (
        select coalesce(max({{ cfg.sk }}), 0) as max_sk
        from {{ target }}
        {%- if reapply %}
        where {{ vf }} < {{ eff1 }}
        {%- endif %}
    ),
    {%- endif %}
    events as (
        {%- if target is not none %}
        select
            {{ keys }},
            {%- for a in columns.attrs %}
            null as {{ a }},
            {%- endfor %}
            0 as _scd2_load,
            true as _scd2_present,
            _scd2_tracked
        from base
        union all
        {%- endif %}
        select
            {{ keys }},
            {%- for a in columns.attrs %}
            {{ a }},
            {%- endfor %}
            _scd2_load,
            _scd2_present,
            _scd2_tracked
        from src
    ),
    sequenced as (
        select
            e.*,
            lag(e._scd2_load) over w as _scd2_prev_load,
            lag(e._scd2_present) over w as _scd2_prev_present,
            lag(e._scd2_tracked) over w as _scd2_prev_tracked,
            lead(e._scd2_load, 1, {{ n + 1 }}) over w as _scd2_next_load
        from events as e
        window w as ({{ window }})
    ),
    tagged as (
        select
            s.*,
            case
                when s._scd2_load = 0 then 'B'
                when s._scd2_load = s._scd2_prev_load then raise_error(concat(
                    {{ duplicate | join(', ') }}))
                {# the key existed before: present at its last event, not left out since #}
                when not coalesce(s._scd2_prev_present
                    and element_at({{ next_full }}, s._scd2_prev_load + 1) >= s._scd2_load,
                    false)
                    then case when s._scd2_present then 'I' else 'N' end
                when not s._scd2_present then 'D'
                when s._scd2_tracked <> s._scd2_prev_tracked then 'U'
                else 'N'
            end as _scd2_op,
            case
                when s._scd2_present
                    and element_at({{ next_full }}, s._scd2_load + 1) < s._scd2_next_load
                    then element_at({{ next_full }}, s._scd2_load + 1)
            end as _scd2_gone_at
        from sequenced as s
    ),
    versioned as (
        select
            t.*,
            least(
                min(case when t._scd2_op in ('U', 'D') then t._scd2_load end) over (
                    {{ window }} rows between 1 following and unbounded following),
                min(t._scd2_gone_at) over (
                    {{ window }} rows between current row and unbounded following)
            ) as _scd2_end_load
        from tagged as t
    ),
    ended as (
        select
            v.*,
            case
                when v._scd2_end_load is null then {{ sentinel }}
                else date_sub(element_at(array({{ effs | join(', ') }}), v._scd2_end_load), 1)
            end as _scd2_valid_to
        from versioned as v
    )
    {#- One pass over `ended` gives both kinds of rows (two selects from it
        would compute every window above twice: Spark inlines the CTE). -#}
    {%- set keys_e = [] -%}
    {%- for k in cfg.key_cols %}{%- do keys_e.append('e.' ~ k) -%}{%- endfor %}
    select
        {%- if target is not none %}
        case when e._scd2_load = 0 then 'match' else 'insert' end as _scd2_row,
        case when e._scd2_load = 0 then 'X' else e._scd2_op end as _scd2_op,
        {%- else %}
        'insert' as _scd2_row,
        e._scd2_op,
        {%- endif %}
        {%- for k in cfg.key_cols %}
        e.{{ k }},
        {%- endfor %}
        {%- for a in columns.attrs %}
        e.{{ a }},
        {%- endfor %}
        {%- if target is not none %}
        case when e._scd2_load > 0 then cast(m.max_sk + row_number() over (
            partition by e._scd2_load = 0 order by e._scd2_load, {{ keys_e | join(', ') }}
        ) as bigint) end as _scd2_sk,
        case when e._scd2_load > 0
            then element_at(array({{ effs | join(', ') }}), e._scd2_load) end as _scd2_valid_from,
        {%- else %}
        cast(row_number() over (
            order by e._scd2_load, {{ keys_e | join(', ') }}
        ) as bigint) as _scd2_sk,
        element_at(array({{ effs | join(', ') }}), e._scd2_load) as _scd2_valid_from,
        {%- endif %}
        e._scd2_valid_to
    from ended as e
    {%- if target is not none %}
    cross join max_sk as m
    where e._scd2_op in ('I', 'U')
        or e._scd2_load = 0 {{- ' and e._scd2_end_load is not null' if not reapply }}
    {%- if reapply %}
    union all
    {# keys the earlier application inserted that have no row from before it #}
    select
        'match' as _scd2_row,
        'X' as _scd2_op,
        {%- for k in cfg.key_cols %}
        f.{{ k }},
        {%- endfor %}
        {%- for a in columns.attrs %}
        null as {{ a }},
        {%- endfor %}
        cast(null as bigint) as _scd2_sk,
        cast(null as date) as _scd2_valid_from,
        {{ sentinel }} as _scd2_valid_to
    from footprint as f
    left anti join base as b on {{ floe_scd2_key_join('f', 'b', cfg.key_cols) }}
    {%- endif %}
    {%- else %}
    where e._scd2_op in ('I', 'U')
    {%- endif %}
{% endmacro %}


{#
    The tracked columns as one struct value, compared with `<>` to tag a
    change: field by field, a NULL equal to a NULL and different from any
    value, so exact (no hash to collide) and names, separators and NULLs
    cannot run together as in a concatenation. It was
    sha2(to_json(named_struct(...))): the JSON text and the digest cost about
    1.75 us of CPU per row, 2-6 core-seconds of dim_customer's first build at
    1000x (docs/decisions/0068-scd2-tracked-columns-compared-as-a-struct.md).
#}
{% macro floe_scd2_tracked(alias, tracked) -%}
    named_struct(
        {%- for c in tracked %}'{{ c }}', {{ alias }}.{{ c }}{{ ', ' if not loop.last }}{% endfor -%}
    )
{%- endmacro %}


{% macro floe_scd2_key_join(left, right, keys) -%}
    {%- for k in keys %}{{ left }}.{{ k }} = {{ right }}.{{ k }}{{ ' and ' if not loop.last }}{% endfor -%}
{%- endmacro %}
