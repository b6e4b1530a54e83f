{% macro floe_scd2_columns(src_view, cfg) %}
    {#- The model's columns: all, attributes (non-key), tracked, and whether it flags deletes. -#}
    {%- set names = run_query('select * from ' ~ src_view ~ ' limit 0').column_names -%}
    {%- set data = [] -%}
    {%- for n in names if not n.startswith('_scd2_') -%}{%- do data.append(n) -%}{%- endfor -%}
    {%- for k in cfg.key_cols if k not in data -%}
        {{ exceptions.raise_compiler_error("Model " ~ this ~ ": unique_key column '" ~ k
            ~ "' is not a column of the model") }}
    {%- endfor -%}
    {%- set attrs = [] -%}
    {%- for n in data if n not in cfg.key_cols -%}{%- do attrs.append(n) -%}{%- endfor -%}
    {%- set tracked = cfg.tracked or attrs -%}
    {%- for t in tracked if t not in attrs -%}
        {{ exceptions.raise_compiler_error("Model " ~ this ~ ": tracked column '" ~ t
            ~ "' is not a non-key column of the model") }}
    {%- endfor -%}
    {{ return({'data': data, 'attrs': attrs, 'tracked': tracked,
               'flags_deletes': '_scd2_deleted' in names, 'tags_loads': '_scd2_load' in names}) }}
{% endmacro %}
