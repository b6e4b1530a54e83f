{#
    Generic data test: the rows of the model for which a boolean SQL
    expression does not hold (rows returned = failures).
#}
{% test expression_is_true(model, expression) %}
    {{ return(adapter.dispatch('test_expression_is_true', 'dbt')(model, expression)) }}
{% endtest %}

{% macro default__test_expression_is_true(model, expression) %}
    select *
    from {{ model }}
    where not ({{ expression }})
{% endmacro %}
