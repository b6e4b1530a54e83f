{#
    The one MERGE applying every pending load (floe_scd2_versions_sql): current
    rows closed (or, re-applying load 1, rows it inserted deleted and rows it
    closed re-opened), new versions inserted. One commit: a reader never sees
    part of a build's loads.
#}
{% macro floe_scd2_merge_sql(target, versions, columns, cfg, plan, reapply=false) %}
    {%- set vf, vt = cfg.valid_from, cfg.valid_to -%}
    {%- set sentinel = "date'" ~ cfg.sentinel ~ "'" -%}
    {%- set eff1 = "date'" ~ plan[0].eff ~ "'" -%}
    merge into {{ target }} as t
    using {{ versions }} as s
    on s._scd2_row = 'match'
        and {{ floe_scd2_key_join('t', 's', cfg.key_cols) }}
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
