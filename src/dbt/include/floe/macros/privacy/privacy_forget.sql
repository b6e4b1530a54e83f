{#
    GDPR erasure as a run-operation, the same engine as `floe forget` (docs/privacy.md):

        dbt run-operation privacy_forget --args '{subject: "customer_id=42", dry_run: true}'

    The tags come from this invocation's graph; the subject is validated and bound as
    a parameter by floe.privacy, never pasted into SQL. Logs the outcome.
#}
{% macro privacy_forget(subject, dry_run=false, include_landing=false, include_untagged=false) %}
    {%- if execute -%}
        {%- set report = adapter.floe_privacy('forget', {
            'subject': subject | string,
            'dry_run': dry_run,
            'include_landing': include_landing,
            'include_untagged': include_untagged,
        }, graph) -%}
        {{ log(report, info=True) }}
    {%- endif -%}
{% endmacro %}
