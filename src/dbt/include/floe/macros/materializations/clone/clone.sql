{#
    `dbt clone` on Iceberg without copying a data file
    (docs/decisions/0042-dbt-clone-on-iceberg.md). dbt-spark's clone is Delta's
    `shallow clone` and refuses any other file format; dbt's default one runs
    `create or replace table ... clone`, which Spark does not parse. floe registers
    a new Iceberg table on the source's current snapshot (floe.materialize.clone):
    the source keeps that snapshot under a tag, the clone has `gc.enabled=false`,
    so neither side's maintenance deletes a file the other reads.

    Otherwise dbt's own clone materialization: a relation that exists is left as is
    (no-op) unless --full-refresh; a view or a source that is no table becomes a view
    on the deferred relation.
#}
{% macro floe__can_clone_table() %}
    {{ return(True) }}
{% endmacro %}


{% macro floe__create_or_replace_clone(this_relation, defer_relation) %}
    {{ return(adapter.floe_prepare_clone(this_relation, defer_relation)) }}
{% endmacro %}


{%- materialization clone, adapter='floe' -%}

    {%- set relations = {'relations': []} -%}

    {%- if not defer_relation -%}
        {{ log("No relation found in state manifest for " ~ model.unique_id, info=True) }}
        {{ return(relations) }}
    {%- endif -%}

    {%- set existing_relation = load_cached_relation(this) -%}

    {%- if existing_relation and not flags.FULL_REFRESH -%}
        {{ log("Relation " ~ existing_relation ~ " already exists", info=True) }}
        {{ return(relations) }}
    {%- endif -%}

    {%- set other_existing_relation = load_cached_relation(defer_relation) -%}
    {%- set grant_config = config.get('grants') -%}

    {%- if other_existing_relation and other_existing_relation.type == 'table' and can_clone_table() -%}

        {%- set target_relation = this.incorporate(type='table') -%}
        {%- if target_relation.schema == defer_relation.schema
                and target_relation.identifier == defer_relation.identifier -%}
            {{ log("Target relation and defer relation are the same, skipping clone for relation: "
                ~ target_relation.render()) }}
        {%- else -%}
            {#- What stands there goes first: dropping an earlier clone releases its tag,
                the very tag the new clone sets. A failure after it leaves no target, and
                running `dbt clone` again makes it. -#}
            {%- if existing_relation is not none -%}
                {{ log("Dropping relation " ~ existing_relation.render() ~ " to clone into it") }}
                {%- do adapter.drop_relation(existing_relation) -%}
            {%- endif -%}
            {%- set register = create_or_replace_clone(target_relation, defer_relation) -%}
            {%- call statement('main') -%}
                {{ register }}
            {%- endcall -%}
        {%- endif -%}
        {%- set should_revoke = should_revoke(existing_relation, full_refresh_mode=True) -%}
        {%- do apply_grants(target_relation, grant_config, should_revoke=should_revoke) -%}
        {%- do persist_docs(target_relation, model) -%}
        {{ return({'relations': [target_relation]}) }}

    {%- else -%}

        {%- set target_relation = this.incorporate(type='view') -%}
        {#- the view materialization floe inherits: its own, dbt-spark's, dbt's -#}
        {%- for name in ['materialization_view_floe', 'materialization_view_spark',
                         'materialization_view_default'] if name in context -%}
            {%- if loop.first -%}{{ return(context[name]()) }}{%- endif -%}
        {%- endfor -%}

    {%- endif -%}

{%- endmaterialization -%}
