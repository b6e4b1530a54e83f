"""Order-independent checksums of Iceberg tables, for comparing two builds of one input."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

# Columns that legitimately differ between two builds of the same input: when a batch
# was ingested (a clock reading), its load sequence (how many batches came before:
# a build killed and re-run numbers its batches differently), and the data-quality
# and audit bookkeeping of each run.
VOLATILE = frozenset(
    {
        "_ingested_at",
        "_load_seq",
        "applied_at",
        "snapshot_id",
        "run_id",
        "ts",
        "recorded_at",
        "committed_at",
        "detected_at",
    }
)


def table_checksums(
    spark: Any,
    tables: Iterable[str],
    exclude: frozenset[str] = VOLATILE,
    home: str | None = None,
) -> dict[str, tuple[int, str]]:
    """``{table: (rows, sum of xxhash64 of each row's stable columns)}``; ``home`` in
    string columns is replaced by a placeholder (two warehouses' own paths)."""
    from pyspark.sql import functions as F

    out = {}
    for name in sorted(tables):
        df = spark.table(name)
        types = dict(df.dtypes)
        columns = []
        for c in sorted(c for c in df.columns if c.lower() not in exclude):
            col = F.col(f"`{c}`")
            if home and types[c] == "string":
                col = F.replace(col, F.lit(home), F.lit("<FLOE_HOME>"))
            columns.append(col)
        row = df.select(
            F.count(F.lit(1)).alias("n"),
            F.sum(F.xxhash64(*columns).cast("decimal(38,0)")).alias("h"),
        ).collect()[0]
        out[name] = (int(row["n"]), str(row["h"]))
    return out


def warehouse_tables(spark: Any, schemas: Iterable[str]) -> list[str]:
    """Every Iceberg table (not view) of ``schemas`` in the session's catalog."""
    tables = []
    for schema in schemas:
        if not spark.catalog.databaseExists(schema):
            continue
        views = {r.viewName for r in spark.sql(f"show views in {schema}").collect()}
        for t in spark.sql(f"show tables in {schema}").collect():
            if not t.isTemporary and t.tableName not in views:
                tables.append(f"{schema}.{t.tableName}")
    return tables
