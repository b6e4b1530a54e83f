{#
    The pending loads as a plan, and the model rendered once per planned load
    and stacked (UNION ALL), each row tagged with its load's position: the
    input of floe_scd2_versions_sql. A model in the multi-load form
    (floe_scd2_loads()) is rendered once over every planned load and tags its
    rows itself.
#}
{% macro floe_scd2_plan(pending, first_load, cfg) %}
    {#-
        [{idx: 1.., date, kind, fingerprint, eff, full}], oldest first. `eff` is
        valid_from of the versions the load opens; `full`: keys missing from the
        load are deletes. Load dates end up in SQL literals: anything but
        YYYY-MM-DD fails here, naming the model and the load.
    -#}
    {%- set plan = [] -%}
    {%- for load in pending -%}
        {%- set load_date, load_kind, fingerprint = load[0], load[1], load[2] -%}
        {%- if not modules.re.match('^[0-9]{4}-[0-9]{2}-[0-9]{2}$', load_date | string) -%}
            {{ exceptions.raise_compiler_error("Model " ~ this ~ ": load_date '" ~ load_date
                ~ "' listed by " ~ cfg.loads ~ " is not a date written YYYY-MM-DD") }}
        {%- endif -%}
        {%- do plan.append({
            'idx': loop.index,
            'date': load_date | string,
            'kind': load_kind,
            'fingerprint': fingerprint,
            'eff': floe_scd2_effective_date(load_date | string, first_load, cfg),
            'full': cfg.delete_detection == 'absence'
                or (cfg.delete_detection == 'auto' and load_kind in cfg.full_extract_kinds),
        }) -%}
    {%- endfor -%}
    {{ return(plan) }}
{% endmacro %}


{% macro floe_scd2_effective_date(load_date, first_load, cfg) %}
    {#- The first listed load opens its versions on initial_eff_date (when set). -#}
    {%- if load_date == first_load and cfg.initial_eff_date -%}
        {{ return(cfg.initial_eff_date) }}
    {%- endif -%}
    {{ return(load_date) }}
{% endmacro %}


{% macro floe_scd2_multi_load(code) %}
    {#- Whether the model reads floe_scd2_loads() (the multi-load form). -#}
    {{ return((floe_scd2_loads() | trim) in code) }}
{% endmacro %}


{% macro floe_scd2_source_sql(code, plan) %}
    {#- The model's code on lines of its own: a trailing `--` comment cannot eat the `)`. -#}
    {%- if floe_scd2_multi_load(code) -%}
    {#- The multi-load form: one rendering, the pending loads as a relation (their
        dates checked YYYY-MM-DD by floe_scd2_plan), `_scd2_load` from the model. -#}
    {%- set rows = [] -%}
    {%- for p in plan -%}
        {%- do rows.append('(' ~ p.idx ~ ", date'" ~ p.date ~ "')") -%}
    {%- endfor -%}
    {%- set loads = '(select * from values ' ~ rows | join(', ')
        ~ ' as __floe_scd2_loads(_scd2_load, load_date))' -%}
    {%- set code = code | replace(floe_scd2_loads() | trim, loads) -%}
    {%- if '__FLOE_SCD2_LOAD_DATE__' in code -%}
        {{ exceptions.raise_compiler_error("Model " ~ this ~ " reads floe_scd2_loads() and "
            ~ "floe_scd2_load_date(): a model renders every load at once or one load at "
            ~ "a time, not both (docs/scd2.md)") }}
    {%- endif %}
    select _scd2_all_loads.*
    from (
{{ code }}
    ) as _scd2_all_loads
    {%- else -%}
    {%- for p in plan %}
    select _scd2_one_load.*, {{ p.idx }} as _scd2_load
    from (
{{ code | replace('__FLOE_SCD2_LOAD_DATE__', p.date) }}
    ) as _scd2_one_load
    {%- if not loop.last %}
    union all
    {%- endif %}
    {%- endfor %}
    {%- endif %}
{% endmacro %}
