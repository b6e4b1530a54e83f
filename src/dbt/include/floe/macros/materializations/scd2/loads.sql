{#
    The loads to apply: listed by the `scd2_loads` model and not applied, or
    applied with another fingerprint (a file landed late), up to var run_date.
    A load dated before the last applied one cannot be slotted into the
    history and fails, naming both dates.
#}
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
