{# A floe model option: from the model's `meta`, else from its config. #}
{% macro floe_option(name, default=none) %}
    {%- set value = config.meta_get(name) -%}
    {%- if value is none -%}
        {%- set value = config.get(name) -%}
    {%- endif -%}
    {{ return(default if value is none else value) }}
{% endmacro %}
