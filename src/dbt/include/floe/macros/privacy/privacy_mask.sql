{#
    `expr` masked as a column's privacy tags say (docs/privacy.md), for an analyst:

    - `masking` given: `hash`, `encrypt`, `redact` (or a mapping with `method`,
      `keep_last`, `mask_char`), `none` (clear);
    - else a `sensitive` or `private` column: `encrypt` when it is a subject key (it
      must still join), `hash` otherwise;
    - else (public, untagged): clear.

    Arrays, structs and maps are masked as their JSON text. Returns `expr` itself
    when the column stays clear. floe.privacy.tags.ColumnTag.exposure is the same rule
    in Python (the masked reader); a test keeps them equal.
#}
{% macro privacy_mask(expr, meta, data_type='string') %}
    {{ return(adapter.dispatch('privacy_mask', 'dbt')(expr, meta, data_type)) }}
{% endmacro %}

{% macro default__privacy_mask(expr, meta, data_type) %}
    {%- set spec = privacy_exposure(meta) -%}
    {%- if spec is none -%}
        {{ return(expr) }}
    {%- endif -%}
    {%- set complex = (data_type | string | lower).startswith(('array', 'struct', 'map')) -%}
    {%- set text = ('to_json(' ~ expr ~ ')') if complex else expr -%}
    {%- if spec.method == 'hash' -%}
        {{ return(privacy_hash(text)) }}
    {%- elif spec.method == 'encrypt' -%}
        {{ return(privacy_encrypt(text)) }}
    {%- else -%}
        {{ return(privacy_redact(text, spec.get('keep_last', 4), spec.get('mask_char', '#'))) }}
    {%- endif -%}
{% endmacro %}


{# The masking an analyst sees for a column's meta: a mapping with `method`, or none. #}
{% macro privacy_exposure(meta) %}
    {%- set meta = meta or {} -%}
    {%- set masking = meta.get('masking') -%}
    {%- if masking is not none -%}
        {%- set spec = masking if masking is mapping else {'method': masking | string | lower} -%}
        {%- if spec.get('method') not in ['hash', 'encrypt', 'redact', 'none'] -%}
            {{ exceptions.raise_compiler_error(
                "privacy masking must be hash, encrypt, redact or none, not '"
                ~ spec.get('method') ~ "'") }}
        {%- endif -%}
        {{ return(none if spec.get('method') == 'none' else spec) }}
    {%- endif -%}
    {%- if (meta.get('classification') or '') | lower in ['sensitive', 'private'] -%}
        {{ return({'method': 'encrypt'} if meta.get('subject_key') else {'method': 'hash'}) }}
    {%- endif -%}
    {{ return(none) }}
{% endmacro %}
