"""`floe env diff`: what an environment does to the data, per changed table, against main.

For a table with a key (dbt's ``unique_key``, or a column with a ``unique`` test, or
``--key``): one full outer join of main and the branch on the key, inside Spark, keeps
only the rows that differ (added, removed, changed with the names of the columns that
changed); counts and a few example keys come from those rows alone, so the output is
bounded whatever the table's size. Without a key: rows added and removed as multisets
(``exceptAll``). Row totals come from the snapshots' summaries, not from a scan.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from floe.envs.core import _check_table, _iceberg_table, status
from floe.runtime.settings import Settings

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

KINDS = ("added", "removed", "changed")


@dataclass
class TableDiff:
    table: str
    key: list[str]
    rows_main: int | None
    rows_branch: int | None
    counts: dict[str, int] = field(default_factory=dict)
    examples: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    changed_columns: dict[str, int] = field(default_factory=dict)  # column -> rows changed

    def to_json(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "key": self.key,
            "rows_main": self.rows_main,
            "rows_branch": self.rows_branch,
            "counts": self.counts,
            "changed_columns": self.changed_columns,
            "examples": self.examples,
        }


def keys_from_manifest(manifest: Path) -> dict[str, list[str]]:
    """``schema.table`` -> key columns, from dbt's manifest (unique_key, else a unique test)."""
    if not manifest.exists():
        return {}
    data = json.loads(manifest.read_text())
    names: dict[str, str] = {}
    keys: dict[str, list[str]] = {}
    for uid, node in data.get("nodes", {}).items():
        if node.get("resource_type") not in ("model", "snapshot", "seed"):
            continue
        table = f"{node['schema']}.{node.get('alias') or node['name']}".lower()
        names[uid] = table
        key = (node.get("config") or {}).get("unique_key")
        if key:
            keys[table] = [key] if isinstance(key, str) else list(key)
    for node in data.get("nodes", {}).values():
        meta = node.get("test_metadata") or {}
        attached = node.get("attached_node")
        column = node.get("column_name")
        if meta.get("name") == "unique" and attached in names and column:
            keys.setdefault(names[attached], [column])
    return keys


def _total_records(loaded: Any, snapshot_id: int | None) -> int | None:
    if snapshot_id is None:
        return 0
    summary = loaded.snapshot(snapshot_id).summary()
    value = summary.get("total-records")
    return int(value) if value is not None else None


def diff_table(
    spark: SparkSession,
    table: str,
    branch: str,
    key: list[str] | None,
    *,
    examples: int = 5,
) -> TableDiff:
    """Rows of ``table``'s ``branch`` added, removed and changed against its main."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    _check_table(table)
    loaded = _iceberg_table(spark, table)
    refs = loaded.refs()
    main_id = refs.get("main").snapshotId() if refs.containsKey("main") else None
    branch_id = refs.get(branch).snapshotId() if refs.containsKey(branch) else None
    result = TableDiff(
        table,
        list(key or []),
        _total_records(loaded, main_id),
        _total_records(loaded, branch_id),
    )
    read_branch = spark.sql(f"select * from {table} version as of '{branch}'")
    if main_id is None:
        read_main = read_branch.limit(0)
    else:
        read_main = spark.sql(f"select * from {table} version as of 'main'")
    columns = read_branch.columns
    if not key:
        return _diff_without_key(result, read_main, read_branch, examples)
    missing = [k for k in key if k not in columns]
    if missing:
        raise ValueError(f"{table} has no column {', '.join(missing)} to use as its key")
    others = [c for c in columns if c not in key]
    m = read_main.select(
        *key, *[F.col(c).alias(f"m__{c}") for c in others], F.lit(True).alias("m__present")
    )
    b = read_branch.select(
        *key, *[F.col(c).alias(f"b__{c}") for c in others], F.lit(True).alias("b__present")
    )
    joined = m.join(b, on=key, how="full_outer")
    differs = [F.when(~F.col(f"m__{c}").eqNullSafe(F.col(f"b__{c}")), F.lit(c)) for c in others]
    kind = (
        F.when(F.col("m__present").isNull(), "added")
        .when(F.col("b__present").isNull(), "removed")
        .otherwise("changed")
    )
    changed_cols = F.filter(F.array(*differs), lambda x: x.isNotNull()) if others else F.array()
    diffs = (
        joined.select(*key, kind.alias("kind"), changed_cols.alias("changed_columns"))
        .where((F.col("kind") != "changed") | (F.size("changed_columns") > 0))
        .persist(StorageLevel.MEMORY_AND_DISK)
    )
    try:
        rows = diffs.groupBy("kind").count().collect()
        result.counts = {k: 0 for k in KINDS} | {r["kind"]: int(r["count"]) for r in rows}
        if result.counts["changed"]:
            per_column = (
                diffs.where(F.col("kind") == "changed")
                .select(F.explode("changed_columns").alias("column"))
                .groupBy("column")
                .count()
                .collect()
            )
            result.changed_columns = {r["column"]: int(r["count"]) for r in per_column}
        for name in KINDS:
            if result.counts[name]:
                picked = diffs.where(F.col("kind") == name).limit(examples).collect()
                result.examples[name] = [
                    {
                        **{k: r[k] for k in key},
                        **({"columns": r["changed_columns"]} if name == "changed" else {}),
                    }
                    for r in picked
                ]
    finally:
        diffs.unpersist()
    return result


def _diff_without_key(
    result: TableDiff, read_main: DataFrame, read_branch: DataFrame, examples: int
) -> TableDiff:
    added = read_branch.exceptAll(read_main)
    removed = read_main.exceptAll(read_branch)
    result.counts = {"added": added.count(), "removed": removed.count(), "changed": 0}
    for name, frame in (("added", added), ("removed", removed)):
        if result.counts[name]:
            result.examples[name] = [r.asDict() for r in frame.limit(examples).collect()]
    return result


def diff_env(
    spark: SparkSession,
    settings: Settings,
    name: str,
    keys: dict[str, list[str]],
    *,
    examples: int = 5,
) -> list[TableDiff]:
    """One :class:`TableDiff` per table environment ``name`` changed."""
    st = status(spark, settings, name)
    return [
        diff_table(spark, table, st.env.branch, keys.get(table.lower()), examples=examples)
        for table in st.changed
    ]


def render(diffs: list[TableDiff]) -> str:
    if not diffs:
        return "no table changed"
    lines = []
    for d in diffs:
        key = ", ".join(d.key) if d.key else "no key: whole rows compared"
        c = d.counts
        lines.append(
            f"{d.table} (key {key}): main {d.rows_main} rows, branch {d.rows_branch} rows; "
            f"+{c.get('added', 0)} added, -{c.get('removed', 0)} removed, "
            f"~{c.get('changed', 0)} changed"
        )
        if d.changed_columns:
            cols = ", ".join(f"{k} ({v})" for k, v in sorted(d.changed_columns.items()))
            lines.append(f"  changed columns: {cols}")
        for kind, rows in d.examples.items():
            lines.append(f"  e.g. {kind}: {rows}")
    return "\n".join(lines)
