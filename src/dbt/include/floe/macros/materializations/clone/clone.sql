{#
    `dbt clone` of a table: not supported on floe yet. dbt-spark's clone is a
    Delta `shallow clone` and fails on Iceberg with a message about Delta; an
    Iceberg clone that shares data files must be safe against `floe maintain`
    (expire, orphan clean) on either side, which is not built yet.
#}
{% macro floe__create_or_replace_clone(this_relation, defer_relation) %}
    {{ exceptions.raise_compiler_error(
        "dbt clone of " ~ defer_relation ~ " into " ~ this_relation ~ " is not supported on "
        ~ "floe yet: build the model into this target instead (dbt build -s <model>), "
        ~ "or read the deferred table with --defer") }}
{% endmacro %}
