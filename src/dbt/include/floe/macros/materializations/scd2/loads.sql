{# The loads listed by the model's `scd2_loads` model, and those still to apply. #}
{% macro floe_scd2_loads(cfg) %}
    {#- [(load_date 'YYYY-MM-DD', kind, fingerprint)], oldest first. -#}
    {%- set rel = ref(cfg.loads) -%}
    {%- set rows = run_query(
        "select cast(load_date as string), cast(load_kind as string), cast(fingerprint as string) from "
        ~ rel ~ " order by 1") -%}
    {%- set loads = [] -%}
    {%- for r in rows -%}
        {%- do loads.append([r[0], r[1], r[2]]) -%}
    {%- endfor -%}
    {{ return(loads) }}
{% endmacro %}


{% macro floe_scd2_pending(loads, applied, cfg) %}
    {%- set last_applied = (applied.keys() | sort | last) if applied else none -%}
    {%- set pending = [] -%}
    {%- for load in loads -%}
        {%- if (cfg.run_date is none or load[0] <= cfg.run_date | string)
              and applied.get(load[0]) != load[2] -%}
            {%- if last_applied is not none and load[0] < last_applied -%}
                {{ exceptions.raise_compiler_error(
                    "Model " ~ this ~ ": load " ~ load[0] ~ " is older than the last applied load "
                    ~ last_applied ~ ". SCD2 history is applied in load_date order; a load that "
                    ~ "lands (or changes) before the last applied one cannot be slotted in. "
                    ~ "Rebuild the history with `dbt build --full-refresh -s " ~ model.name ~ "`.") }}
            {%- endif -%}
            {%- do pending.append(load) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(pending) }}
{% endmacro %}
