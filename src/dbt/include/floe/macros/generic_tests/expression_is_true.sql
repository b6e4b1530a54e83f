{% test expression_is_true(model, expression) %}
    -- Rows for which the boolean SQL expression does not hold.
    select * from {{ model }} where not ({{ expression }})
{% endtest %}
