{#
    Rectification as a run-operation, the same engine as `floe rectify`:

        dbt run-operation privacy_rectify --args '{subject: "customer_id=51936", set: {phonenumber: "000"}}'

    `set` maps columns to their new values (strings, typed per column by floe.privacy).
#}
{% macro privacy_rectify(subject, set, dry_run=false, include_untagged=false) %}
    {%- if execute -%}
        {%- if set is not mapping or not set -%}
            {{ exceptions.raise_compiler_error(
                "privacy_rectify: set must map columns to new values, e.g. {phonenumber: '000'}") }}
        {%- endif -%}
        {%- set report = adapter.floe_privacy('rectify', {
            'subject': subject | string,
            'set': set,
            'dry_run': dry_run,
            'include_untagged': include_untagged,
        }, graph) -%}
        {{ log(report, info=True) }}
    {%- endif -%}
{% endmacro %}
