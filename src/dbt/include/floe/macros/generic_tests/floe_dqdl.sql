{#
    Generic test `floe_dqdl`: evaluate a model's DQDL ruleset (Glue Data Quality's rule
    language, floe.quality.dqdl) after it is built, in floe's one-pass engine. The
    ruleset is the model's `meta.floe_dqdl` (a DQDL document) or, when that is absent,
    the file `<model>.dqdl` beside the model's SQL:

        - name: fct_orders
          config:
            meta:
              floe_dqdl: |
                Rules = [ RowCount > 0, IsComplete "order_id" ]
              floe_dqdl_datasets: {reference: dim_customer}   # aliases: models or schema.table
          data_tests: [floe_dqdl]

    A failed rule errors the node (message: table, rule, expected, actual). Metrics and
    one result per rule (its DQDL text) go to dq.metrics / dq.check_results. Rules run
    only in `dbt build` and `dbt test`.
#}
{% test floe_dqdl(model, ruleset=none, datasets=none) %}
    {{ return(adapter.dispatch('floe_dqdl', 'dbt')(model, ruleset, datasets)) }}
{% endtest %}

{% macro default__floe_dqdl(model, ruleset, datasets) %}
    {%- set empty_result = "select 'ok' as floe_check where 1 = 0" -%}
    {%- if not execute or flags.WHICH not in ('build', 'test') -%}
        {{ return(empty_result) }}
    {%- endif -%}
    {%- set node = floe_checks_model_node(model) -%}
    {%- set meta = node.config.get('meta', {}) if node is not none else {} -%}
    {%- set text = ruleset if ruleset is not none else meta.get('floe_dqdl') -%}
    {%- set aliases = datasets if datasets is not none else meta.get('floe_dqdl_datasets', {}) -%}
    {%- set tables = {} -%}
    {%- for alias, target in (aliases or {}).items() -%}
        {%- do tables.update({alias: floe_dqdl_table(target)}) -%}
    {%- endfor -%}
    {%- set model_name = node.name if node is not none else model.identifier -%}
    {%- set model_path = node.original_file_path if node is not none else none -%}
    {%- set outcome = adapter.floe_run_dqdl(
        model, text, model_name, invocation_id, tables, model_path) -%}
    {{ return(outcome['sql']) }}
{% endmacro %}

{# `schema.table` of a dataset alias's target: a model's name, or already schema.table. #}
{% macro floe_dqdl_table(target) %}
    {%- if '.' in target -%}
        {{ return(target) }}
    {%- endif -%}
    {%- for node in graph.nodes.values() -%}
        {%- if node.resource_type in ('model', 'snapshot', 'seed') and node.name == target -%}
            {{ return(node.schema ~ '.' ~ (node.alias or node.name)) }}
        {%- endif -%}
    {%- endfor -%}
    {{ exceptions.raise_compiler_error(
        "floe_dqdl: dataset " ~ target ~ " is neither a model of the project nor schema.table") }}
{% endmacro %}
