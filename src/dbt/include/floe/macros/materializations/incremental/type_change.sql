{#
    How a column of type `new` (incoming rows) relates to the table's `old`:
    'same', 'fits' (assignable without loss), 'widen' (Iceberg can promote the
    column) or 'refuse'.
#}
{% macro floe_type_change(old, new) %}
    {%- set aliases = {'integer': 'int', 'long': 'bigint', 'short': 'smallint',
        'byte': 'tinyint', 'real': 'float'} -%}
    {%- set old = aliases.get(old, old) -%}
    {%- set new = aliases.get(new, new) -%}
    {%- set integral = ['tinyint', 'smallint', 'int', 'bigint'] -%}
    {%- set timestamps = ['timestamp', 'timestamp_ntz', 'timestamp_ltz'] -%}
    {%- if old == new -%}{{ return('same') }}{%- endif -%}
    {%- if new in ('void', 'null') -%}{{ return('fits') }}{%- endif -%}
    {%- if old in integral and new in integral -%}
        {%- if integral.index(new) <= integral.index(old) -%}{{ return('fits') }}{%- endif -%}
        {{ return('widen' if new == 'bigint' else 'refuse') }}
    {%- endif -%}
    {%- if old == 'double' and (new == 'float' or new in integral) -%}{{ return('fits') }}{%- endif -%}
    {%- if old == 'float' and new == 'double' -%}{{ return('widen') }}{%- endif -%}
    {%- if old.startswith('decimal') and new.startswith('decimal') -%}
        {%- set o = old[8:-1].split(',') -%}
        {%- set n = new[8:-1].split(',') -%}
        {%- if o[1] == n[1] -%}
            {{ return('fits' if n[0] | int <= o[0] | int else 'widen') }}
        {%- endif -%}
        {{ return('refuse') }}
    {%- endif -%}
    {%- if old in timestamps and new in timestamps -%}{{ return('fits') }}{%- endif -%}
    {%- if old.startswith(('struct', 'array', 'map')) or new.startswith(('struct', 'array', 'map')) -%}
        {#- nested types: Spark's own store assignment decides -#}
        {{ return('fits') }}
    {%- endif -%}
    {{ return('refuse') }}
{% endmacro %}
