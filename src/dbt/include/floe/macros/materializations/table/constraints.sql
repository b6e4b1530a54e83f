{#
    Contract constraints, enforced by floe (docs/decisions/0028-contract-constraints.md).

    Iceberg tables enforce no constraint on write, and Iceberg refuses to turn an
    existing column required (ALTER COLUMN ... SET NOT NULL). So floe checks every
    row inside the write itself: `sql` filtered by `assert_true(condition, message)`
    for each constraint, which fails the Spark job that writes the data files, before
    Iceberg commits anything (the table keeps its previous snapshot).

        not_null             column is not null
        check                the expression is not false (SQL: null passes)
        unique, primary_key  no two rows share the key (primary_key: and no null)
        foreign_key, custom  refused at compile time: floe cannot check them on a
                             write; a `relationships` data test checks a foreign key

    A model's constraints are the developer's config, not landed data: their
    expressions are SQL by design; names go into messages as escaped literals.
#}
{% macro floe_enforced_select(sql) -%}
    {%- set checks = [] -%}
    {%- set keys = [] -%}
    {%- for name, column in model.columns.items() -%}
        {%- set quoted = adapter.quote(name) if column.get('quote') else name -%}
        {%- for constraint in column.get('constraints', []) -%}
            {%- do floe_constraint_checks(constraint, [quoted], checks, keys, 'column ' ~ name) -%}
        {%- endfor -%}
    {%- endfor -%}
    {%- for constraint in model.get('constraints', []) -%}
        {%- do floe_constraint_checks(constraint, constraint.get('columns') or [], checks, keys, 'model') -%}
    {%- endfor -%}
    {%- if not checks and not keys -%}
        {{ return(sql) }}
    {%- endif -%}
    {%- set counted = [] -%}
    {%- for key in keys -%}
        {%- set label = 'floe_key_rows_' ~ loop.index -%}
        {%- do counted.append('count(1) over (partition by ' ~ key['columns'] | join(', ') ~ ') as ' ~ label) -%}
        {%- do checks.append({'condition': label ~ ' = 1', 'message': key['message']}) -%}
    {%- endfor -%}
    {%- set asserts = [] -%}
    {%- for check in checks -%}
        {%- do asserts.append('assert_true(' ~ check['condition'] ~ ', '
            ~ floe_string_literal(this ~ ': ' ~ check['message'] ~ '; nothing was written') ~ ') is null') -%}
    {%- endfor -%}
    {%- set inner = 'select *' ~ (', ' ~ counted | join(', ') if counted else '') ~ ' from (\n' ~ sql ~ '\n) as floe_rows' -%}
    {{ return('select ' ~ adapter.dispatch('get_column_names', 'dbt')() ~ ' from (\n' ~ inner
        ~ '\n) as floe_checked\nwhere ' ~ asserts | join('\n  and ')) }}
{%- endmacro %}


{% macro floe_constraint_checks(constraint, columns, checks, keys, where) %}
    {%- set kind = constraint.get('type') -%}
    {%- set expression = constraint.get('expression') -%}
    {%- set label = (constraint.get('name') or kind) ~ ' (' ~ where ~ ')' -%}
    {%- if kind == 'not_null' -%}
        {%- for column in columns -%}
            {%- do checks.append({'condition': column ~ ' is not null',
                'message': 'not_null constraint violated: ' ~ column ~ ' is null'}) -%}
        {%- endfor -%}
    {%- elif kind == 'check' -%}
        {%- if not expression -%}
            {{ exceptions.raise_compiler_error("Model " ~ this ~ ": check constraint " ~ label ~ " has no expression") }}
        {%- endif -%}
        {%- do checks.append({'condition': 'coalesce((' ~ expression ~ '), true)',
            'message': 'check constraint ' ~ label ~ ' violated: ' ~ expression}) -%}
    {%- elif kind in ('unique', 'primary_key') -%}
        {%- if not columns -%}
            {{ exceptions.raise_compiler_error("Model " ~ this ~ ": " ~ kind ~ " constraint " ~ label ~ " names no columns") }}
        {%- endif -%}
        {%- do keys.append({'columns': columns,
            'message': kind ~ ' constraint violated: two rows share ' ~ columns | join(', ')}) -%}
        {%- if kind == 'primary_key' -%}
            {%- for column in columns -%}
                {%- do checks.append({'condition': column ~ ' is not null',
                    'message': 'primary_key constraint violated: ' ~ column ~ ' is null'}) -%}
            {%- endfor -%}
        {%- endif -%}
    {%- else -%}
        {{ exceptions.raise_compiler_error(
            "Model " ~ this ~ ": floe cannot enforce a " ~ kind ~ " constraint (" ~ label
            ~ ") on an Iceberg table, and does not ignore one silently. Remove it from the "
            ~ "contract; check a foreign key with a `relationships` data test instead.") }}
    {%- endif -%}
{% endmacro %}
