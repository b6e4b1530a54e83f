{# The one MERGE that applies a staged load (floe_scd2_stage). #}
{% macro floe_scd2_merge_sql(target, staged, columns, cfg, eff) %}
    {%- set vf, vt = cfg.valid_from, cfg.valid_to -%}
    {%- set day_before = "date_sub(date'" ~ eff ~ "', 1)" -%}
    merge into {{ target }} as t
    using {{ staged }} as s
    on s._scd2_row = 'match'
        and {{ floe_scd2_key_join('t', 's', cfg.key_cols) }}
        and (t.{{ vt }} = date'{{ cfg.sentinel }}'
             or t.{{ vt }} = {{ day_before }} or t.{{ vf }} = date'{{ eff }}')
    {#- Rows an earlier application of this load inserted: replaced by this one. -#}
    when matched and t.{{ vf }} = date'{{ eff }}' then delete
    when matched and s._scd2_op in ('U', 'D') then update set
        t.{{ vt }} = {{ day_before }}
    {#- Expired by an earlier application of this load, unchanged now: current again. -#}
    when matched and t.{{ vt }} <> date'{{ cfg.sentinel }}' then update set
        t.{{ vt }} = date'{{ cfg.sentinel }}'
    when not matched and s._scd2_row = 'insert' then insert (
        {{ cfg.sk }},
        {%- for c in columns.data %} {{ c }},{% endfor %}
        {{ vf }}, {{ vt }}
    ) values (
        s._scd2_sk,
        {%- for c in columns.data %} s.{{ c }},{% endfor %}
        date'{{ eff }}', date'{{ cfg.sentinel }}'
    )
{% endmacro %}
