{#
    The scd2 config of the model (see scd2.sql for every option), checked:
    unknown delete_detection values and dates that are not YYYY-MM-DD fail
    naming the model and the option.
#}
{% macro floe_scd2_config() %}
    {%- set key = config.require('unique_key') -%}
    {%- set keys = [key] if key is string else key -%}
    {%- set mode = config.get('delete_detection', 'auto') -%}
    {%- if mode not in ['auto', 'absence', 'status'] -%}
        {{ exceptions.raise_compiler_error("Model " ~ this ~ ": delete_detection '" ~ mode
            ~ "' is not one of auto, absence, status") }}
    {%- endif -%}
    {%- set dates = {
        'sentinel': config.get('sentinel', '9999-12-31'),
        'initial_eff_date': config.get('initial_eff_date', none)
            or var('scd2_initial_eff_date', none),
        'run_date': var('run_date', none),
    } -%}
    {%- for option, value in dates.items() if value is not none -%}
        {%- if not modules.re.match('^[0-9]{4}-[0-9]{2}-[0-9]{2}$', value | string) -%}
            {{ exceptions.raise_compiler_error("Model " ~ this ~ ": scd2 " ~ option ~ " '"
                ~ value ~ "' is not a date written YYYY-MM-DD") }}
        {%- endif -%}
    {%- endfor -%}
    {{ return({
        'key_cols': keys,
        'loads': config.require('scd2_loads'),
        'tracked': config.get('tracked_columns', none),
        'sk': config.get('surrogate_key', 'sk'),
        'valid_from': config.get('valid_from', 'valid_from'),
        'valid_to': config.get('valid_to', 'valid_to'),
        'sentinel': dates.sentinel | string,
        'initial_eff_date': dates.initial_eff_date | string if dates.initial_eff_date else none,
        'delete_detection': mode,
        'full_extract_kinds': config.get('full_extract_kinds', ['full']),
        'run_date': dates.run_date,
    }) }}
{% endmacro %}
