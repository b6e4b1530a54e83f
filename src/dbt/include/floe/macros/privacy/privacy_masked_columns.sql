{#
    The select list of `relation` (a `ref()`) as analysts may see it: every column,
    masked by the privacy tags of the model it belongs to (`privacy_mask`), under its
    own name. A model selecting only this from one `ref` is a *masked twin*: floe's
    privacy tooling knows its columns hold masked values (the erasure searches them
    for the masked subject key).

        select {{ '{{' }} privacy_masked_columns(ref('dim_customer')) {{ '}}' }}
        from {{ '{{' }} ref('dim_customer') {{ '}}' }}

    The relation's columns come from the warehouse at run time, so a column added
    upstream flows through too, masked if tagged (untagged personal columns in marts
    fail `floe privacy scan`). A struct column with tagged fields is masked whole.
#}
{% macro privacy_masked_columns(relation) %}
    {{ return(adapter.dispatch('privacy_masked_columns', 'dbt')(relation)) }}
{% endmacro %}

{% macro default__privacy_masked_columns(relation) %}
    {%- if not execute -%}
        {{ return('*') }}
    {%- endif -%}
    {%- set metas = privacy_column_metas(relation) -%}
    {%- set items = [] -%}
    {%- set columns = adapter.get_columns_in_relation(relation) -%}
    {%- if not columns and load_relation(relation) is none -%}
        {#- Not built yet (dbt compile, docs or lineage on an empty warehouse): the
            columns the upstream model documents. A build compiles this model after its
            upstream ran, from the warehouse's columns. -#}
        {%- set columns = privacy_documented_columns(relation) -%}
    {%- endif -%}
    {%- for column in columns -%}
        {%- set name = column.name | lower -%}
        {%- set meta = metas.get(name) -%}
        {%- if meta is none -%}
            {%- set nested = [] -%}
            {%- for key, m in metas.items() -%}
                {%- if key.startswith(name ~ '.') and privacy_exposure(m) is not none -%}
                    {%- do nested.append(key) -%}
                {%- endif -%}
            {%- endfor -%}
            {%- set meta = {'masking': 'hash'} if nested else {} -%}
        {%- endif -%}
        {%- set masked = privacy_mask(column.quoted, meta, column.data_type) -%}
        {%- do items.append(column.quoted if masked == column.quoted
                            else masked ~ ' as ' ~ column.quoted) -%}
    {%- endfor -%}
    {%- if not items -%}
        {{ exceptions.raise_compiler_error(
            "privacy_masked_columns: " ~ relation ~ " has no columns (is it built?)") }}
    {%- endif -%}
    {{ return(items | join(',\n    ')) }}
{% endmacro %}


{#
    Column path (lower case) -> privacy meta of the model, seed or snapshot that builds
    `relation`, from dbt's graph (`meta` merged with `config.meta`; struct fields'
    `fields` tags as `column.field`).
#}
{% macro privacy_column_metas(relation) %}
    {%- set found = {} -%}
    {%- for node in graph.nodes.values() -%}
        {%- if node.resource_type in ['model', 'seed', 'snapshot']
              and (node.schema | lower) == (relation.schema | lower)
              and ((node.alias or node.name) | lower) == (relation.identifier | lower) -%}
            {%- for name, column in node.columns.items() -%}
                {%- set meta = {} -%}
                {%- do meta.update(column.meta or {}) -%}
                {%- do meta.update((column.config or {}).get('meta') or {}) -%}
                {%- do found.update({name | lower: meta}) -%}
                {%- for field, sub in (meta.get('fields') or {}).items() -%}
                    {%- do found.update({(name ~ '.' ~ field) | lower: sub}) -%}
                {%- endfor -%}
            {%- endfor -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(found) }}
{% endmacro %}


{#
    The columns the model, seed or snapshot that builds `relation` documents in its
    YAML, as Column objects (a documented data_type, else string): what
    privacy_masked_columns selects when `relation` is not built yet.
#}
{% macro privacy_documented_columns(relation) %}
    {%- set columns = [] -%}
    {%- for node in graph.nodes.values() -%}
        {%- if node.resource_type in ['model', 'seed', 'snapshot']
              and (node.schema | lower) == (relation.schema | lower)
              and ((node.alias or node.name) | lower) == (relation.identifier | lower) -%}
            {%- for name, column in node.columns.items() -%}
                {%- do columns.append(api.Column.create(name, column.data_type or 'string')) -%}
            {%- endfor -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(columns) }}
{% endmacro %}
