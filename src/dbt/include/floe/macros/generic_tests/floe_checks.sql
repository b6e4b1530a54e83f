{#
    Generic test `floe_checks`: run a model's data-quality checks (floe.quality) after it
    is built. Attach it to a model and declare the checks in its meta:

        - name: dim_customer
          config:
            meta:
              floe_checks:
                - check: completeness(email_id) >= 0.99
          data_tests: [floe_checks]

    or pass them directly: `data_tests: [{floe_checks: {arguments: {checks: [...]}}}]`.
    An `error` check that fails errors the node (message: table, check, expected,
    actual); `warn` checks that fail are reported as dbt warnings. Metrics and results
    are appended to dq.metrics / dq.check_results. Checks run only in `dbt build` and
    `dbt test`, never while compiling or generating docs.
#}
{% test floe_checks(model, checks=none) %}
    {{ return(adapter.dispatch('floe_checks', 'dbt')(model, checks)) }}
{% endtest %}

{% macro default__floe_checks(model, checks) %}
    {%- set empty_result = "select 'ok' as floe_check where 1 = 0" -%}
    {%- if not execute or flags.WHICH not in ('build', 'test') -%}
        {{ return(empty_result) }}
    {%- endif -%}
    {%- set node = floe_checks_model_node(model) -%}
    {%- set declared = checks -%}
    {%- if declared is none and node is not none -%}
        {%- set declared = node.config.get('meta', {}).get('floe_checks')
            or node.get('meta', {}).get('floe_checks') -%}
    {%- endif -%}
    {%- set model_name = node.name if node is not none else model.identifier -%}
    {%- set outcome = adapter.floe_run_checks(model, declared, model_name, invocation_id) -%}
    {%- for message in outcome['warnings'] -%}
        {%- do exceptions.warn('floe_checks: ' ~ message) -%}
    {%- endfor -%}
    {{ return(outcome['sql']) }}
{% endmacro %}

{# The graph node (model, snapshot or seed) that `relation` was built from, or none. #}
{% macro floe_checks_model_node(relation) %}
    {%- for node in graph.nodes.values() -%}
        {%- if node.resource_type in ('model', 'snapshot', 'seed')
            and node.schema == relation.schema
            and (node.alias or node.name) == relation.identifier -%}
            {{ return(node) }}
        {%- endif -%}
    {%- endfor -%}
    {{ return(none) }}
{% endmacro %}
