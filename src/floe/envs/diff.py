"""`floe env diff`: what an environment does to the data, per changed table, against main.

For a table with a key (dbt's ``unique_key``, or a column with a ``unique`` test, or
``--key``): one full outer join of main and the branch on the key, inside Spark, keeps
only the rows that differ (added, removed, changed with the names of the columns that
changed); counts and a few example keys come from those rows alone, so the output is
bounded whatever the table's size. Without a key: rows added and removed as multisets
(``exceptAll``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from floe.envs.core import _check_table, _iceberg_table, status
from floe.runtime.settings import Settings

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

KINDS = ("added", "removed", "changed")
_BRANCH = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
ROWS_SEEN = "floe_env_diff_rows"  # the observation counting each side's rows


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


def diff_table(
    spark: SparkSession,
    table: str,
    branch: str,
    key: list[str] | None,
    *,
    examples: int = 5,
) -> TableDiff:
    """Rows of ``table``'s ``branch`` added, removed and changed against its main.

    With a key: one pass, a full outer join on the key filtered to the differing rows
    (each side's row count from its data files' record counts, or observed on the join
    where a delete file applies), feeding one aggregation grouped
    by kind and example bucket, which counts each kind of change and each changed column
    and keeps up to ``examples`` example rows per kind: the differing row with the
    smallest key hash in each of ``examples`` hash buckets (``min_by``: bounded, whatever
    the number of changes).
    docs/decisions/0055-environment-build-and-diff-costs.md has the measurements.
    """
    from pyspark.sql import functions as F

    _check_table(table)
    if not _BRANCH.match(branch):
        raise ValueError(f"{branch!r} is not a branch name floe makes (env_<name>)")
    loaded = _iceberg_table(spark, table)
    refs = loaded.refs()
    main_id = refs.get("main").snapshotId() if refs.containsKey("main") else None
    branch_id = refs.get(branch).snapshotId() if refs.containsKey(branch) else None
    result = TableDiff(table, list(key or []), None, None)
    # Both sides read as of the snapshots just looked up (ids), so the counts from their
    # files and the rows joined are of the same snapshots, whatever commits meanwhile.
    branch_at = f"'{branch}'" if branch_id is None else str(int(branch_id))
    read_branch = spark.sql(f"select * from {table} version as of {branch_at}")
    if main_id is None:
        read_main = read_branch.limit(0)
    else:
        read_main = spark.sql(f"select * from {table} version as of {int(main_id)}")
    columns = read_branch.columns
    if not key:
        return _diff_without_key(result, read_main, read_branch, examples)
    missing = [k for k in key if k not in columns]
    if missing:
        raise ValueError(f"{table} has no column {', '.join(missing)} to use as its key")
    # Row counts: the record counts of each side's data files (exact, and read from the
    # manifests without a Spark job) when no delete file applies; otherwise observed on
    # the join's output (a Spark observation: no second scan, but it breaks the join's
    # generated code, ~15 % of a 1M-row diff). A snapshot summary's total-records is not
    # trusted: a branch's read 0 after an INSERT OVERWRITE in an environment.
    counted = None
    files_main = _rows_in_files(loaded, main_id) if main_id is not None else 0
    if files_main is not None and branch_id is not None:
        files_branch = _rows_in_files(loaded, branch_id)
        if files_branch is not None:
            counted = (files_main, files_branch)
    others = [c for c in columns if c not in key]
    # The plan is written as SQL expressions over positional names (k__0: the j-th key
    # column; m__0, b__0, d__0: the i-th other column), one py4j call per step instead
    # of one per column function (~400 calls, 0.15 s of a 1M-row diff); no column of the
    # table can collide with a name the plan makes. Names come from the table's own
    # schema, quoted as identifiers.
    keys = [f"k__{j}" for j in range(len(key))]
    as_keys = [f"{_quoted(k)} as k__{j}" for j, k in enumerate(key)]
    m = read_main.selectExpr(
        *as_keys, *[f"{_quoted(c)} as m__{i}" for i, c in enumerate(others)], "true as m__present"
    )
    b = read_branch.selectExpr(
        *as_keys, *[f"{_quoted(c)} as b__{i}" for i, c in enumerate(others)], "true as b__present"
    )
    joined = m.join(b, on=keys, how="full_outer")
    if counted is None:
        joined = joined.observe(
            ROWS_SEEN,
            F.count("m__present").alias("rows_main"),
            F.count("b__present").alias("rows_branch"),
        )
    differs = [f"not (m__{i} <=> b__{i})" for i in range(len(others))]
    rows = joined.selectExpr(
        *keys,
        "case when m__present is null then 'added' when b__present is null then 'removed' "
        f"when {' or '.join(differs) or 'false'} then 'changed' end as kind",
        *[f"{flag} as d__{i}" for i, flag in enumerate(differs)],
    ).where("kind is not null")
    # Only the differing rows (usually few) are hashed and grouped by kind and example
    # bucket: at most 3 x `examples` groups, one small aggregation. (One global
    # aggregation of 3 x `examples` struct min_bys over every row measured 1.9x a plain
    # join: struct buffers make Spark aggregate row by row, and the plan is large.)
    picks = max(1, examples)
    flags = ", ".join(f"case when d__{i} then {i} end" for i in range(len(others)))
    changed_at = f"filter(array({flags}), x -> x is not null)" if others else "array()"
    summary = (
        rows.selectExpr("*", f"xxhash64({', '.join(keys)}) as h")
        .groupBy(F.col("kind"), F.expr(f"pmod(h, {picks}) as bucket"))
        .agg(
            F.expr("count(1) as n"),
            *[
                F.expr(f"count_if(kind = 'changed' and d__{i}) as c__{i}")
                for i in range(len(others))
            ],
            F.expr(
                f"min_by(struct({', '.join(keys)}, "
                f"case when kind = 'changed' then {changed_at} end), h) as example"
            ),
        )
    )
    groups = sorted(summary.collect(), key=lambda g: (g["kind"], g["bucket"]))
    result.counts = {k: sum(int(g["n"]) for g in groups if g["kind"] == k) for k in KINDS}
    changed = {c: sum(int(g[f"c__{i}"]) for g in groups) for i, c in enumerate(others)}
    result.changed_columns = {c: n for c, n in changed.items() if n}
    for k in KINDS:
        found = [g["example"] for g in groups if g["kind"] == k][:examples]
        picked = [_example(row, key, others) for row in found]
        if k != "changed":
            for row in picked:
                row.pop("columns", None)
        if picked:
            result.examples[k] = picked
    seen = counted if counted is not None else _observed(summary, ROWS_SEEN)
    if seen is None:  # the optimizer dropped the observation (e.g. an empty side)
        # Counted on the same reads (the snapshot ids above), not by ref name.
        seen = (read_main.count() if main_id is not None else 0, read_branch.count())
    result.rows_main, result.rows_branch = seen
    return result


def _quoted(name: str) -> str:
    """A column name as a Spark SQL identifier (backquoted, backquotes doubled)."""
    return "`" + name.replace("`", "``") + "`"


def _example(found: Any, key: list[str], others: list[str]) -> dict[str, Any]:
    """An example row of the aggregation (the key's values, then the positions of the
    changed columns) as ``{key column: value, ..., "columns": [changed column names]}``."""
    values = list(found)
    example = dict(zip(key, values[: len(key)], strict=True))
    at = values[len(key)]
    example["columns"] = None if at is None else [others[i] for i in at]
    return example


def _rows_in_files(table: Any, snapshot_id: int, most_files: int = 200) -> int | None:
    """Rows of ``table`` (an Iceberg ``Table`` through py4j) at ``snapshot_id``: the sum
    of its data files' record counts, exact as Iceberg writes them; None when a delete
    file applies to one (merge-on-read: the count needs the rows), when the files are
    too many to ask for one by one (about six calls to the JVM each) or when planning
    fails: then the rows are counted as they are joined."""
    try:
        tasks = table.newScan().useSnapshot(snapshot_id).planFiles()
    except Exception:  # py4j's error: the join's observation counts instead
        return None
    try:
        found = tasks.iterator()
        total = files = 0
        while found.hasNext():
            task = found.next()
            files += 1
            if files > most_files or not task.deletes().isEmpty():
                return None
            total += int(task.file().recordCount())
        return total
    except Exception:  # py4j's error while reading the manifests: counted when joined
        return None
    finally:
        tasks.close()


def _observed(frame: DataFrame, name: str) -> tuple[int, int] | None:
    """The (rows_main, rows_branch) observation ``name`` made while ``frame`` ran, or None.

    Read from the finished query (``QueryExecution.observedMetrics``), never waited for:
    ``pyspark.sql.Observation.get`` blocks forever when the optimizer removed the
    observing node.
    """
    metrics = frame._jdf.queryExecution().observedMetrics()
    found = metrics.get(name)
    if not found.isDefined():
        return None
    row = found.get()
    return int(row.getLong(0)), int(row.getLong(1))


def _diff_without_key(
    result: TableDiff, read_main: DataFrame, read_branch: DataFrame, examples: int
) -> TableDiff:
    result.rows_main, result.rows_branch = read_main.count(), read_branch.count()
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
