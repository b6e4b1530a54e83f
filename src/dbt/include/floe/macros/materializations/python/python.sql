{#
    Python models run in the dbt process's own SparkSession (floe.adapter), so
    an incremental model's new rows can stay a temporary view: no scratch
    Iceberg table, no extra commits. Final tables are written with the
    DataFrameWriterV2 API: one atomic createOrReplace per build.
#}
{% macro floe__create_table_as(temporary, relation, compiled_code, language='sql') -%}
    {%- if language == 'python' -%}
        {{ floe_py_write(compiled_code, relation, temporary) }}
    {%- elif not temporary -%}
        {{ floe_create_table_as_sql(relation, compiled_code) }}
    {%- elif config.get('contract').enforced -%}
        {#- an incremental model's new rows: checked as they are written (constraints.sql) -#}
        {{ spark__create_table_as(temporary, relation,
            floe_enforced_select(get_select_subquery(compiled_code)), language) }}
    {%- else -%}
        {{ spark__create_table_as(temporary, relation, compiled_code, language) }}
    {%- endif -%}
{%- endmacro %}

{% macro floe_py_write(compiled_code, relation, temporary) %}
{{ compiled_code }}
# --- floe: in-process materialization (generated) --- #
import json as _floe_json
from floe.feeds.raw_models import feed_loader as _floe_feed_loader
# JSON text in a Python string literal: JSON's null/true/false are not Python.
_floe_feeds = _floe_json.loads({{ floe_feed_nodes(model) | tojson | tojson }})
dbt = dbtObj(_floe_feed_loader(spark, floe_settings, _floe_feeds, {{ 'True' if is_incremental() else 'False' }}))
df = model(dbt, spark)
import pyspark.sql
if not isinstance(df, pyspark.sql.DataFrame):
    try:
        import pandas
    except ImportError:
        pandas = None
    if pandas is not None and isinstance(df, pandas.DataFrame):
        df = spark.createDataFrame(df)
    else:
        raise TypeError(f"{type(df)} is not a supported return type for a floe Python model")
{%- if temporary %}
df.createOrReplaceTempView("{{ relation.identifier }}")
{%- else %}
from pyspark.sql import functions as _F
writer = df.writeTo("{{ relation }}").using("iceberg")
for _key, _value in {{ floe_table_properties() | tojson }}.items():
    writer = writer.tableProperty(_key, str(_value))
{%- set partition_by = config.get('partition_by') %}
{%- if partition_by %}
{%- if partition_by is string %}{% set partition_by = [partition_by] %}{% endif %}
writer = writer.partitionedBy(*[_F.expr(_c) for _c in {{ partition_by | tojson }}])
{%- endif %}
writer.createOrReplace()
{%- endif %}
{% endmacro %}
