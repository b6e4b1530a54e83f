"""Row count of every table and view of floe's schemas, read by Spark; the last line is JSON.

Run as a child process by test_scale_out.py against a catalog and master given in the
environment (a process of its own: its Spark master is the cluster's).
"""

import json

from floe.runtime import SCHEMAS, Settings, get_spark

spark = get_spark(Settings.from_env())
counts = {}
for schema in SCHEMAS:
    names = [r.tableName for r in spark.sql(f"show tables in {schema}").collect()]
    names += [r.viewName for r in spark.sql(f"show views in {schema}").collect()]
    for name in sorted(set(names)):
        counts[f"{schema}.{name}"] = spark.table(f"{schema}.{name}").count()
spark.stop()
print(json.dumps(counts, sort_keys=True))
