{#
    The scd2 config of the model (see scd2.sql for every option), checked in
    Python (floe.materialize.configs.Scd2Config): unknown delete_detection
    values and dates that are not YYYY-MM-DD fail naming the model and the option.
#}
{% macro floe_scd2_config() %}
    {{ return(adapter.floe_scd2_config(this, {
        'unique_key': config.require('unique_key'),
        'scd2_loads': config.require('scd2_loads'),
        'tracked_columns': config.get('tracked_columns', none),
        'surrogate_key': config.get('surrogate_key', none),
        'valid_from': config.get('valid_from', none),
        'valid_to': config.get('valid_to', none),
        'sentinel': config.get('sentinel', none),
        'initial_eff_date': config.get('initial_eff_date', none),
        'delete_detection': config.get('delete_detection', none),
        'full_extract_kinds': config.get('full_extract_kinds', none),
        'scd2_initial_eff_date': var('scd2_initial_eff_date', none),
        'run_date': var('run_date', none),
    })) }}
{% endmacro %}
