{#
    floe's `table` materialization: dbt-spark's, plus "same inputs, no rebuild".

    A SQL table model whose compiled SQL, config and upstream Iceberg snapshots are
    those of its last build is not rebuilt: nothing is committed, so re-running
    `dbt build` on unchanged input changes no table (same snapshot ids). The inputs'
    fingerprint is kept in the table property `floe.inputs`. Upstream views and
    ephemeral models are followed to the tables they read.

    Rebuilt anyway: --full-refresh, Python models (they may read files), and models
    with `floe_skip_unchanged: false` in `meta` (e.g. SQL that reads current_date() or
    tables it does not ref()).
#}
{% materialization table, adapter='floe', supported_languages=['sql', 'python'] %}
    {%- set language = model['language'] -%}
    {%- set target_relation = this.incorporate(type='table') -%}
    {%- set old_relation = load_relation(this) -%}
    {%- set grant_config = config.get('grants') -%}
    {%- set skippable = language == 'sql' and not should_full_refresh()
        and (config.get('meta') or {}).get('floe_skip_unchanged', true)
        and old_relation is not none and not old_relation.is_view -%}
    {%- set fingerprint = floe_input_fingerprint() if language == 'sql' else none -%}

    {#- In an environment (FLOE_ENV, envs/env.sql) the fingerprint of its own builds is
        kept under floe.inputs.<branch>; a table it has not written is unchanged when
        main's fingerprint matches (its inputs read the same through the branches). -#}
    {%- set env_branch = floe_env_branch() -%}
    {%- set inputs_key = 'floe.inputs.' ~ env_branch if env_branch else 'floe.inputs' -%}
    {%- if skippable and env_branch and not floe_env_has_branch(target_relation, env_branch) -%}
        {%- set inputs_key = 'floe.inputs' -%}
    {%- endif -%}

    {{ run_hooks(pre_hooks) }}
    {%- if skippable and floe_table_property(target_relation, inputs_key) == fingerprint -%}
        {{ log(this ~ ': inputs unchanged since the last build, nothing committed', info=False) }}
        {%- call statement('main') -%}
            select 'inputs unchanged' as floe_skipped
        {%- endcall -%}
    {%- elif env_branch -%}
        {%- if language == 'python' -%}
            {%- call statement('floe_env_python', language='python') -%}
{{ floe_env_python_rows(compiled_code) }}
            {%- endcall -%}
        {%- endif -%}
        {%- do floe_env_write_table(target_relation, old_relation, compiled_code, language) -%}
        {%- if fingerprint is not none -%}
            {%- call statement('record_inputs') -%}
                alter table {{ target_relation }} set tblproperties ('floe.inputs.{{ env_branch }}' = '{{ fingerprint }}')
            {%- endcall -%}
        {%- endif -%}
    {%- else -%}
        {%- if old_relation is not none and (old_relation.is_view or not old_relation.is_iceberg) -%}
            {% do adapter.drop_relation(old_relation) %}
        {%- endif -%}
        {%- call statement('main', language=language) -%}
            {{ create_table_as(False, target_relation, compiled_code, language) }}
        {%- endcall -%}
        {%- if fingerprint is not none -%}
            {%- call statement('record_inputs') -%}
                alter table {{ target_relation }} set tblproperties ('floe.inputs' = '{{ fingerprint }}')
            {%- endcall -%}
        {%- endif -%}
    {%- endif -%}

    {% set should_revoke = should_revoke(old_relation, full_refresh_mode=True) %}
    {% do apply_grants(target_relation, grant_config, should_revoke) %}
    {% do persist_docs(target_relation, model) %}
    {{ run_hooks(post_hooks) }}
    {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}
