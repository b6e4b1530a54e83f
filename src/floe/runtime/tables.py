"""Order-independent fingerprints of tables: did two builds produce the same data?

A fingerprint is a table's row count and the sum (mod 2**64) of one 64-bit hash per row
over its columns in name order, so row order, file layout and partitioning do not
matter, while a changed value, a lost row or a duplicated row does. Columns that
legitimately differ between two builds of the same input are left out by name
(:data:`VOLATILE_COLUMNS` says which and why).

Two ways to compute them, never to be mixed in one comparison (different hashes):

- :func:`catalog_fingerprints` through pyiceberg: no Spark, any catalog floe can open
  (SQLite or PostgreSQL), e.g. comparing a ``local`` build with a ``cluster`` build;
- :func:`spark_fingerprints` in a SparkSession (``xxhash64``), for tests that have one.

:func:`compare_fingerprints` lists the differences.

Two cheaper questions live here too, answered from metadata without a Spark job:
:func:`current_state` (a table's uuid and current snapshot), :func:`read_fingerprint`
(what a read of a table or view sees now), :func:`rows_unchanged_since` (did any
commit touch one writer's rows of a shared table) and :func:`rows_same_since` (were all
commits since a snapshot compactions), used to skip work whose inputs have not changed
(:mod:`floe.runtime.settled`: feeds, scd2 dimensions, unchanged table models).
"""

from __future__ import annotations

import datetime as dt
import decimal
import hashlib
import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from floe.runtime.catalog import open_catalog
from floe.runtime.session import SCHEMAS
from floe.runtime.settings import Settings

if TYPE_CHECKING:
    import pyarrow as pa
    from pyiceberg.catalog import Catalog
    from pyspark.sql import DataFrame, SparkSession

# Column name -> why it differs between two builds of the same landed files (found by
# building one landing zone on `local` and on `cluster`: tests/cluster). A column is
# left out of every table that has it.
VOLATILE_COLUMNS: dict[str, str] = {
    "_ingested_at": "load timestamp: wall-clock time the raw model loaded the file "
    "(raw.*, raw.quarantine, raw.landed_files, and marts that carry it)",
    "_load_seq": "load sequence: the order in which raw batches committed (raw.*, "
    "raw.landed_files, marts that carry it); raw models run in parallel, so two builds "
    "of the same input may number the same batch differently (docs/reliability.md)",
    "applied_at": "wall-clock time an SCD2 load was applied (audit.floe_scd2_ledger)",
    "computed_at": "wall-clock time a data-quality metric was computed (dq.metrics)",
    "checked_at": "wall-clock time a data-quality check ran (dq.check_results)",
    "run_id": "dbt's invocation id, new on every run (dq.*)",
    "snapshot_id": "Iceberg snapshot ids are random 64-bit numbers (dq.*, audit.*)",
    # A check-strategy dbt snapshot (snapshots.product_priority_observed) dates each
    # version by the run that saw it, and its version id hashes that time.
    "dbt_valid_from": "wall-clock time of the snapshot run that first saw a version",
    "dbt_valid_to": "wall-clock time of the snapshot run that saw the next version",
    "dbt_updated_at": "wall-clock time of the snapshot run that recorded a version",
    "dbt_scd_id": "a snapshot version's id: a hash of its key and its run time",
}

UINT64 = 1 << 64


@dataclass(frozen=True)
class TableFingerprint:
    """Row count and order-independent checksum of one table."""

    rows: int
    checksum: int
    columns: tuple[str, ...]  # hashed, in this order
    ignored: tuple[str, ...]  # present but left out (volatile)

    def to_json(self) -> dict[str, Any]:
        return {
            "rows": self.rows,
            "checksum": str(self.checksum),
            "columns": list(self.columns),
            "ignored": list(self.ignored),
        }


def _split_columns(
    names: Iterable[str], ignore: Mapping[str, str]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    names = sorted(names)
    return (
        tuple(n for n in names if n not in ignore),
        tuple(n for n in names if n in ignore),
    )


# -- pyiceberg / Arrow


def _canonical(value: Any) -> Any:
    """A JSON-able form of an Arrow cell: maps sorted, floats exact, temporals ISO."""
    if isinstance(value, float):
        return "NaN" if math.isnan(value) else repr(value)
    if isinstance(value, decimal.Decimal):
        return f"D{value.normalize()}"
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, dict):
        return {k: _canonical(v) for k, v in sorted(value.items())}
    if isinstance(value, list | tuple):
        items = [_canonical(v) for v in value]
        if value and all(isinstance(v, tuple) and len(v) == 2 for v in value):
            # Arrow returns a map as (key, value) pairs in storage order.
            return sorted(items, key=lambda kv: json.dumps(kv, sort_keys=True))
        return items
    return value


def _rewritten(value: Any, rewrite: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        for old, new in rewrite.items():
            value = value.replace(old, new)
    return value


def arrow_fingerprint(
    table: pa.Table,
    ignore: Mapping[str, str] = VOLATILE_COLUMNS,
    rewrite: Mapping[str, str] | None = None,
) -> TableFingerprint:
    """The fingerprint of an Arrow table (e.g. a pyiceberg scan).

    ``rewrite`` replaces substrings of string cells before hashing, e.g. a lakehouse's
    own ``FLOE_HOME`` path (a quarantine message naming its registry file) by a
    placeholder, so two lakehouses in different places compare equal.
    """
    columns, ignored = _split_columns(table.column_names, ignore)
    values = [table.column(name).to_pylist() for name in columns]
    total = 0
    for row in zip(*values, strict=True) if values else ():
        cells = [_canonical(_rewritten(v, rewrite)) if rewrite else _canonical(v) for v in row]
        encoded = json.dumps(cells, sort_keys=True).encode()
        total += int.from_bytes(hashlib.blake2b(encoded, digest_size=8).digest(), "little")
    rows = table.num_rows
    return TableFingerprint(rows, total % UINT64, columns, ignored)


def catalog_fingerprints(
    catalog: Catalog,
    namespaces: Iterable[str],
    ignore: Mapping[str, str] = VOLATILE_COLUMNS,
    rewrite: Mapping[str, str] | None = None,
) -> dict[str, TableFingerprint]:
    """``namespace.table`` -> fingerprint for every table (not view) of ``namespaces``."""
    out: dict[str, TableFingerprint] = {}
    existing = {ns[0] for ns in catalog.list_namespaces()}
    for namespace in namespaces:
        if namespace not in existing:
            continue
        for identifier in sorted(catalog.list_tables(namespace)):
            arrow = catalog.load_table(identifier).scan().to_arrow()
            out[".".join(identifier)] = arrow_fingerprint(arrow, ignore, rewrite)
    return out


def lakehouse_fingerprints(
    settings: Settings, ignore: Mapping[str, str] = VOLATILE_COLUMNS
) -> dict[str, TableFingerprint]:
    """Fingerprints of every table in floe's schemas of the lakehouse ``settings`` name.

    The lakehouse's own home path in string cells reads ``$FLOE_HOME`` (see
    :func:`arrow_fingerprint`).
    """

    catalog = open_catalog(settings)
    try:
        return catalog_fingerprints(catalog, SCHEMAS, ignore, {str(settings.home): "$FLOE_HOME"})
    finally:
        catalog.close()


# -- Spark


def spark_fingerprints(
    spark: SparkSession,
    schemas: Iterable[str] | None = None,
    ignore: Mapping[str, str] = VOLATILE_COLUMNS,
) -> dict[str, TableFingerprint]:
    """``schema.table`` -> fingerprint for every table of ``schemas`` (default: floe's)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import MapType

    out: dict[str, TableFingerprint] = {}
    for schema in schemas or SCHEMAS:
        if not spark.catalog.databaseExists(schema):
            continue
        for row in spark.sql(f"show tables in {schema}").collect():
            if row.isTemporary:
                continue
            name = f"{schema}.{row.tableName}"
            df = spark.table(name)
            columns, ignored = _split_columns(df.columns, ignore)
            types = {f.name: f.dataType for f in df.schema.fields}
            # xxhash64 refuses maps: hash their entries, sorted.
            exprs = [
                F.array_sort(F.map_entries(F.col(f"`{c}`")))
                if isinstance(types[c], MapType)
                else F.col(f"`{c}`")
                for c in columns
            ]
            row_hash = F.xxhash64(*exprs) if exprs else F.lit(0)
            result = df.select(
                F.count(F.lit(1)).alias("n"),
                F.sum(row_hash.cast("decimal(38,0)")).alias("h"),
            ).collect()[0]
            checksum = int(result["h"] or 0) % UINT64
            out[name] = TableFingerprint(int(result["n"]), checksum, columns, ignored)
    return out


def compare_fingerprints(
    left: Mapping[str, TableFingerprint], right: Mapping[str, TableFingerprint]
) -> list[str]:
    """Every difference between two sets of fingerprints, one line each; [] when equal."""
    problems = []
    for name in sorted(set(left) | set(right)):
        a, b = left.get(name), right.get(name)
        if a is None or b is None:
            problems.append(f"{name}: only in {'right' if a is None else 'left'}")
        elif a.columns != b.columns:
            problems.append(f"{name}: columns differ {a.columns} != {b.columns}")
        elif a.rows != b.rows:
            problems.append(f"{name}: {a.rows} rows != {b.rows} rows")
        elif a.checksum != b.checksum:
            problems.append(f"{name}: same {a.rows} rows, different values")
    return problems


# -- Current state


@dataclass(frozen=True)
class TableState:
    """Which table (its Iceberg uuid) at which commit (its current snapshot; None if empty)."""

    uuid: str
    snapshot_id: int | None


def current_state(spark: SparkSession, table: str, ref: str = "main") -> TableState | None:
    """``table``'s uuid and the snapshot of its ``ref`` (branch, ``main`` by default),
    fresh from the catalog; None if the table is missing.

    Loads the table's metadata through Iceberg's Java API (one catalog lookup and a
    metadata read, milliseconds) and refreshes it, so a commit by another process is
    seen even when the session's catalog caches tables. No Spark job: cheap enough to
    ask before every ingest. A ref the table does not have has no snapshot (None).
    """
    loaded = _load_table(spark, table)
    if loaded is None:
        return None
    snapshot = loaded.currentSnapshot() if ref == "main" else loaded.snapshot(ref)
    return TableState(str(loaded.uuid().toString()), snapshot.snapshotId() if snapshot else None)


# Snapshot operations that rewrite files without changing a table's rows (compaction,
# manifest rewrites): Iceberg's DataOperations.REPLACE.
_SAME_ROWS_OPERATIONS = frozenset({"replace"})


def rows_same_since(spark: SparkSession, table: str, since: int, ref: str = "main") -> bool:
    """Every commit to ``table``'s ``ref`` after snapshot ``since`` left its rows as they
    were (compactions and manifest rewrites only); False when ``since`` is no longer an
    ancestor of the ref's snapshot (rolled back, expired, replaced) or the table is gone.
    Metadata reads only, no Spark job."""
    loaded = _load_table(spark, table)
    if loaded is None:
        return False
    snapshot = loaded.currentSnapshot() if ref == "main" else loaded.snapshot(ref)
    while snapshot is not None and snapshot.snapshotId() != since:
        if str(snapshot.operation()) not in _SAME_ROWS_OPERATIONS:
            return False
        parent = snapshot.parentId()
        snapshot = loaded.snapshot(parent) if parent is not None else None
    return snapshot is not None


def _load_table(spark: SparkSession, table: str) -> Any:
    """``table``'s org.apache.iceberg.Table, refreshed from the catalog; None if missing."""
    jvm: Any = spark._jvm
    if table.count(".") == 1:  # schema.table: in floe's catalog, whatever the session's current one
        table = f"{spark.conf.get('spark.sql.defaultCatalog', 'spark_catalog')}.{table}"
    try:
        loaded = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(
            spark._jsparkSession, table
        )
    except Exception as exc:  # py4j wraps NoSuchTableException; anything else is real
        if "NoSuchTable" in str(exc) or "not found" in str(exc).lower():
            return None
        raise
    loaded.refresh()
    return loaded


def rows_unchanged_since(
    spark: SparkSession, table: str, since: int | None, column: str, value: str
) -> bool:
    """No commit to ``table`` after snapshot ``since`` can have touched its rows whose
    ``column`` equals ``value`` (a string column).

    Walks the snapshots from the current one back to ``since`` through Iceberg's Java
    API and looks at the files each one added or removed: a file whose bounds of
    ``column`` leave out ``value`` holds none of those rows, so the commit did not
    touch them. A file without bounds (e.g. a position-delete file) may hold them.
    Iceberg's truncated string bounds stay a lower and an upper bound, so the answer
    errs only towards False. False too when ``since`` is no longer an ancestor of the
    current snapshot (rolled back, expired) or the table or column is gone. Metadata
    reads only, no Spark job: a table shared by several writers (the scd2 ledger) need
    not look changed to one of them because another appended its own rows.
    """
    jvm: Any = spark._jvm
    try:
        loaded = _load_table(spark, table)
    except Exception:  # not an Iceberg table: nothing to vouch for
        return False
    field = loaded.schema().findField(column) if loaded is not None else None
    if field is None:
        return False
    field_id, field_type = field.fieldId(), field.type()
    convert = jvm.org.apache.iceberg.types.Conversions.fromByteBuffer

    def may_hold(file: Any) -> bool | None:
        """From the file's bounds; None when it has none."""
        lowers, uppers = file.lowerBounds(), file.upperBounds()
        lower = lowers.get(field_id) if lowers is not None else None
        upper = uppers.get(field_id) if uppers is not None else None
        if lower is None or upper is None:
            return None
        # Code point order is UTF-8 byte order, Iceberg's order for strings.
        return str(convert(field_type, lower)) <= value <= str(convert(field_type, upper))

    def holding(snapshot_id: int) -> set[str]:
        """Paths of the data files of a snapshot that may hold the rows (by their bounds)."""
        find = getattr(jvm.org.apache.iceberg.FindFiles, "in")(loaded).inSnapshot(snapshot_id)
        match = jvm.org.apache.iceberg.expressions.Expressions.equal(column, value)
        each = find.withRecordsMatching(match).collect().iterator()
        paths = set()
        while each.hasNext():
            paths.add(str(each.next().location()))
        return paths

    io = loaded.io()
    snapshot = loaded.currentSnapshot()
    while snapshot is not None and snapshot.snapshotId() != since:
        parent = snapshot.parentId()
        for files in (
            snapshot.addedDataFiles(io),
            snapshot.removedDataFiles(io),
            snapshot.addedDeleteFiles(io),
            snapshot.removedDeleteFiles(io),
        ):
            unknown = []
            each = files.iterator()
            while each.hasNext():
                file = each.next()
                hit = may_hold(file)
                if hit:
                    return False
                if hit is None:
                    unknown.append(file)
            # A removed data file's manifest entry carries no bounds: look them up in
            # the snapshot it was removed from. Delete files have none for the column.
            if unknown and (
                parent is None
                or any(f.content().name() != "DATA" for f in unknown)
                or {str(f.location()) for f in unknown} & holding(parent)
            ):
                return False
        snapshot = loaded.snapshot(parent) if parent is not None else None
        if snapshot is None and parent is not None:
            return False  # expired: what it did is unknown
    return snapshot is not None or since is None


# Functions whose value changes between two reads of the same snapshots: a view that
# calls one has no fingerprint (its checks always compute).
_VOLATILE_CALL = re.compile(
    r"\b(current_date|current_timestamp|current_timezone|localtimestamp|now|rand|randn|random"
    r"|uuid|shuffle|current_user|session_user|user|monotonically_increasing_id"
    r"|input_file_name|spark_partition_id)\(",
    re.IGNORECASE,
)
_INTERNAL_LEAVES = {"CTERelationRef", "OneRowRelation", "LocalRelation"}


def read_fingerprint(frame: DataFrame) -> int | None:
    """What a read of ``frame`` sees now, as a number equal only for the same data.

    A table: its current Iceberg snapshot id (None while it has none). Anything else
    (a view, a query): a negative 63-bit fingerprint of its analyzed plan (expression
    and CTE ids normalized) and of the name, uuid and current snapshot of every Iceberg
    table it reads; None when it reads anything else or calls a function whose value
    changes between reads (``now()``, ``rand()``...). Read from the plan Spark analyzes
    anyway: no query of the snapshot metadata tables, no Spark job. Used to skip work
    whose inputs have not changed (data-quality metrics, scd2 "nothing pending").
    """
    plan = frame._jdf.queryExecution().analyzed()
    inputs: list[tuple[str, str, int | None]] = []
    leaves = plan.collectLeaves().iterator()
    while leaves.hasNext():
        leaf = leaves.next()
        kind = leaf.getClass().getSimpleName()
        if kind in _INTERNAL_LEAVES:
            continue
        if kind != "DataSourceV2Relation":
            return None
        try:
            iceberg = leaf.table().table()  # Iceberg's SparkTable -> org.apache.iceberg.Table
            snapshot = iceberg.currentSnapshot()
            inputs.append(
                (
                    str(iceberg.name()),
                    str(iceberg.uuid().toString()),
                    int(snapshot.snapshotId()) if snapshot is not None else None,
                )
            )
        except Exception:  # a V2 table that is not Iceberg's
            return None
    child = plan.child() if plan.getClass().getSimpleName() == "SubqueryAlias" else plan
    if child.getClass().getSimpleName() == "DataSourceV2Relation":
        return inputs[0][2]
    text = plan.toString()
    if _VOLATILE_CALL.search(text):
        return None
    ids: dict[str, str] = {}
    text = re.sub(r"#\d+L?", "#", text)
    text = re.sub(
        r"CTERelation(Def|Ref) (\d+)",
        lambda m: f"CTERelation{m[1]} {ids.setdefault(m[2], str(len(ids)))}",
        text,
    )
    digest = hashlib.sha256(f"{text}\n{sorted(inputs, key=repr)!r}".encode()).digest()
    return -(int.from_bytes(digest[:8], "big") >> 1) - 1


def tables_in(spark: SparkSession, schemas: Iterable[str] = SCHEMAS) -> list[str]:
    """Iceberg tables (not views, not temporary views) of ``schemas`` as the session
    lists them, as ``schema.table``, sorted."""
    found = []
    existing = {r[0] for r in spark.sql("show namespaces").collect()}
    for schema in schemas:
        if schema not in existing:
            continue
        views = {r.viewName for r in spark.sql(f"show views in {schema}").collect()}
        for row in spark.sql(f"show tables in {schema}").collect():
            if row.tableName not in views and not row.isTemporary:
                found.append(f"{schema}.{row.tableName}")
    return sorted(found)
