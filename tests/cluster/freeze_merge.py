"""freeze_view on the cluster: a MERGE reads rows frozen on the worker's executors.

Run as a child process by test_scale_out.py (its Spark master is the cluster's). Creates
and drops one table of its own; the last line printed is JSON.
"""

import json

from floe.runtime import Settings, get_spark
from floe.runtime.views import freeze_view, release_view

TABLE = "audit.floe_freeze_check"
spark = get_spark(Settings.from_env())
spark.sql(f"create or replace table {TABLE} (k bigint, v string) using iceberg")
spark.sql(f"insert into {TABLE} values (1, 'a'), (2, 'b')")
spark.sql(
    f"create or replace temporary view freeze_src as select k + 1 as k, upper(v) as v from {TABLE}"
)
freeze_view(spark, "freeze_src", "freeze_rows")
spark.sql(
    f"merge into {TABLE} t using freeze_rows s on t.k = s.k"
    " when matched then update set t.v = s.v"
    " when not matched then insert (k, v) values (s.k, s.v)"
)
spark.sql(f"insert into {TABLE} values (9, 'z')")
out = {
    "frozen": sorted([list(r) for r in spark.table("freeze_rows").collect()]),
    "table": sorted([list(r) for r in spark.table(TABLE).collect()]),
    "master": spark.sparkContext.master,
}
release_view(spark, "freeze_rows")
spark.sql(f"drop table {TABLE} purge")
spark.stop()
print(json.dumps(out))
