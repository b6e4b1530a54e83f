{#
    floe's `table` materialization: dbt-spark's, plus "same inputs, no rebuild".

    A SQL table model whose compiled SQL, config and upstream Iceberg snapshots are
    those of its last build is not rebuilt: nothing is committed, so re-running
    `dbt build` on unchanged input changes no table (same snapshot ids). The inputs'
    fingerprint is kept in floe's one memo store (floe.runtime.settled, kind
    `tables`) with the table's own state after the build, so a table changed since
    by anything but a compaction is rebuilt. Upstream views and ephemeral models are
    followed to the tables they read.

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

    {#- In an environment (FLOE_ENV, envs/env.sql) the memo of its own builds is
        floe_table_memo_name(this, branch) over the table's branch; a table it has not
        written is unchanged when main's memo matches (its inputs read the same through
        the branches). -#}
    {%- set env_branch = floe_env_branch() -%}
    {%- set memo_ref = env_branch or 'main' -%}
    {%- if skippable and env_branch and not floe_env_has_branch(target_relation, env_branch) -%}
        {%- set memo_ref = 'main' -%}
    {%- endif -%}
    {%- set memo_name = floe_table_memo_name(this, '' if memo_ref == 'main' else memo_ref) -%}

    {{ run_hooks(pre_hooks) }}
    {%- if skippable and adapter.floe_settled('tables', memo_name,
        [{'table': target_relation | string, 'ref': memo_ref}], fingerprint) -%}
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
            {%- do adapter.floe_remember_settled('tables', floe_table_memo_name(this, env_branch),
                [{'table': target_relation | string, 'ref': env_branch}], fingerprint) -%}
        {%- endif -%}
    {%- else -%}
        {%- if old_relation is not none and (old_relation.is_view or not old_relation.is_iceberg) -%}
            {% do adapter.drop_relation(old_relation) %}
        {%- endif -%}
        {%- call statement('main', language=language) -%}
            {{ create_table_as(False, target_relation, compiled_code, language) }}
        {%- endcall -%}
        {%- if fingerprint is not none -%}
            {%- do adapter.floe_remember_settled('tables', floe_table_memo_name(this, ''),
                [{'table': target_relation | string, 'ref': 'main'}], fingerprint) -%}
        {%- endif -%}
    {%- endif -%}

    {% set should_revoke = should_revoke(old_relation, full_refresh_mode=True) %}
    {% do apply_grants(target_relation, grant_config, should_revoke) %}
    {% do persist_docs(target_relation, model) %}
    {{ run_hooks(post_hooks) }}
    {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}
