"""Maintenance of one Iceberg table, driven by the policy stored on the table
(``docs/maintenance.md``).

A model declares its policy in YAML (`meta.maintenance`, see the adapter's
properties.sql); the build writes it as table properties, Iceberg's own where
they exist (`history.expire.min-snapshots-to-keep`,
`history.expire.max-snapshot-age-ms`) and floe's otherwise
(`floe.maintain.compact-min-files`, `floe.maintain.orphan-age-days`). So
`floe maintain` needs no dbt project: it reads each table's properties.

Order of the steps matters: compaction and manifest rewrite first (they add a
snapshot), then expiry (which can now drop the files compaction replaced), then
orphan removal. Each step runs only when there is something to do, so a second
run right after the first commits nothing.

Safe while nothing else writes: orphan removal cannot tell a file a concurrent
writer is about to commit from garbage, which is why it only removes files
older than `orphan-age-days` (default 3).

Other catalogs on the same warehouse (*peers*: the sources of `floe catalog
migrate`, retired but still readable) keep reading their tables: each peer table's
current snapshot gets a tag (`floe_peer_<snapshot id>`) before expiry, so expiry keeps
its files, and orphan removal deletes no file a peer's current table state references
(its metadata file, manifest list, manifests, data and delete files).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from floe.materialize.clone import CLONE_SOURCE, GC_ENABLED, stale_clone_tags

if TYPE_CHECKING:
    from pyspark.sql import Row, SparkSession

DAY_MS = 86_400_000
# `schema.table`, plain identifiers: table names are pasted into procedure calls.
_TABLE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*$")


@dataclass
class PeerReferences:
    """What the other catalogs on this warehouse reference: per ``schema.table`` the
    snapshot ids they read, and every file (normalized: :func:`normal_location`)."""

    snapshots: dict[str, set[int]] = field(default_factory=dict)
    files: set[str] = field(default_factory=set)


def normal_location(location: str) -> str:
    """A file location as Spark (``file:/a``) and pyiceberg (``file:///a``) both write it."""
    from urllib.parse import unquote, urlparse

    parsed = urlparse(location)
    if parsed.scheme in ("", "file"):
        return unquote(parsed.path)
    scheme = "s3" if parsed.scheme in ("s3a", "s3n") else parsed.scheme
    return f"{scheme}://{parsed.netloc}{parsed.path}"


def peer_references(catalogs: list[Any]) -> PeerReferences:
    """The current state of every table of the given pyiceberg catalogs (the peers)."""
    refs = PeerReferences()
    for catalog in catalogs:
        for namespace in catalog.list_namespaces():
            for identifier in catalog.list_tables(namespace):
                table = catalog.load_table(identifier)
                refs.files.add(normal_location(table.metadata_location))
                snapshot = table.current_snapshot()
                if snapshot is None:
                    continue
                name = ".".join(identifier)
                refs.snapshots.setdefault(name, set()).add(snapshot.snapshot_id)
                refs.files.add(normal_location(snapshot.manifest_list))
                for manifest in snapshot.manifests(table.io):
                    refs.files.add(normal_location(manifest.manifest_path))
                    for entry in manifest.fetch_manifest_entry(table.io, discard_deleted=True):
                        refs.files.add(normal_location(entry.data_file.file_path))
    return refs


def _tag_peer_snapshots(
    spark: SparkSession, table: str, peers: PeerReferences, catalog: str
) -> list[int]:
    """Tag each peer's current snapshot still in ``table``, so expiry keeps its files."""
    known = {
        row[0]
        for row in spark.sql(f"select snapshot_id from {catalog}.{table}.snapshots").collect()
    }
    tagged = []
    for snapshot_id in sorted(peers.snapshots.get(table, set()) & known):
        spark.sql(
            f"alter table {catalog}.{table} create tag if not exists "
            f"floe_peer_{int(snapshot_id)} as of version {int(snapshot_id)}"
        )
        tagged.append(snapshot_id)
    return tagged


def _remove_orphans_but_peers(
    spark: SparkSession, table: str, cutoff: datetime, peers: PeerReferences, catalog: str
) -> list[str]:
    """Iceberg's orphan candidates (a dry run), less what a peer references, deleted."""
    quoted = table.replace("'", "''")
    candidates = spark.sql(
        f"call {catalog}.system.remove_orphan_files(table => '{quoted}', "
        f"older_than => timestamp '{cutoff:%Y-%m-%d %H:%M:%S}', dry_run => true)"
    ).collect()
    jvm: Any = spark._jvm
    conf = spark._jsparkSession.sessionState().newHadoopConf()
    removed = []
    for row in candidates:
        location = str(row[0])
        if normal_location(location) in peers.files:
            continue
        path = jvm.org.apache.hadoop.fs.Path(location)
        path.getFileSystem(conf).delete(path, False)
        removed.append(location)
    return removed


@dataclass(frozen=True)
class MaintenancePolicy:
    keep_snapshots: int = 5
    max_snapshot_age_ms: int = 7 * DAY_MS
    # Iceberg decides per file group (min-input-files 2), so a low threshold is idempotent.
    compact_min_files: int = 2
    orphan_age_days: float = 3.0
    sort: bool = False  # the table has a sort order (sort_by): compact with 'sort'

    @classmethod
    def from_properties(cls, props: dict[str, str]) -> MaintenancePolicy:
        base = cls()
        return cls(
            keep_snapshots=int(
                props.get("history.expire.min-snapshots-to-keep", base.keep_snapshots)
            ),
            max_snapshot_age_ms=int(
                props.get("history.expire.max-snapshot-age-ms", base.max_snapshot_age_ms)
            ),
            compact_min_files=int(
                props.get("floe.maintain.compact-min-files", base.compact_min_files)
            ),
            orphan_age_days=float(props.get("floe.maintain.orphan-age-days", base.orphan_age_days)),
            sort=bool(props.get("floe.sort-by")),
        )


@dataclass
class TableState:
    data_files: int
    delete_files: int
    snapshots: int
    manifests: int


@dataclass
class TableReport:
    table: str
    before: TableState
    after: TableState
    actions: list[str] = field(default_factory=list)
    expired_snapshots: int = 0
    orphans_removed: int = 0

    def line(self) -> str:
        b, a = self.before, self.after
        done = ", ".join(self.actions) or "nothing to do"
        return (
            f"{self.table}: data files {b.data_files} -> {a.data_files}, "
            f"delete files {b.delete_files} -> {a.delete_files}, "
            f"snapshots {b.snapshots} -> {a.snapshots} ({self.expired_snapshots} expired), "
            f"manifests {b.manifests} -> {a.manifests}, "
            f"orphan files removed {self.orphans_removed} [{done}]"
        )


def _one_row(spark: SparkSession, query: str) -> Row:
    row = spark.sql(query).first()
    if row is None:  # an aggregate without GROUP BY always returns one row
        raise RuntimeError(f"no row from: {query}")
    return row


def _state(spark: SparkSession, table: str) -> TableState:
    files = _one_row(
        spark,
        f"select coalesce(sum(if(content = 0, 1, 0)), 0), coalesce(sum(if(content != 0, 1, 0)), 0)"
        f" from {table}.files",
    )
    snapshots = _one_row(spark, f"select count(*) from {table}.snapshots")[0]
    manifests = _one_row(spark, f"select count(*) from {table}.manifests")[0]
    return TableState(int(files[0]), int(files[1]), int(snapshots), int(manifests))


def table_properties(spark: SparkSession, table: str) -> dict[str, str]:
    return {r[0]: r[1] for r in spark.sql(f"show tblproperties {table}").collect()}


def maintain_table(
    spark: SparkSession,
    table: str,
    policy: MaintenancePolicy | None = None,
    *,
    catalog: str = "lake",
    now: datetime | None = None,
    peers: PeerReferences | None = None,
) -> TableReport:
    """Compact, rewrite manifests, expire snapshots and remove orphans of `table` per policy.

    ``peers``: what other catalogs on the warehouse reference, kept (module doc).
    """
    if not _TABLE_NAME.match(table):
        raise ValueError(f"table {table!r} is not schema.table (letters, digits, underscores)")
    properties = table_properties(spark, table)
    policy = policy or MaintenancePolicy.from_properties(properties)
    before = _state(spark, table)
    report = TableReport(table, before, before)
    quoted = table.replace("'", "''")

    # Environments (docs/envs.md): compaction and manifest rewrites commit to main, so
    # main would no longer be an ancestor of an open environment's branch and its publish
    # (a fast-forward) would be refused. Deferred while one is open; expiry keeps every
    # snapshot a branch references and orphan removal every file they reach.
    open_envs = _open_env_branches(spark, table)
    if open_envs:
        report.actions.append(f"compaction deferred: open environment {', '.join(open_envs)}")
    elif before.data_files >= policy.compact_min_files or before.delete_files > 0:
        strategy = "sort" if policy.sort else "binpack"
        row = spark.sql(
            f"call {catalog}.system.rewrite_data_files(table => '{quoted}', "
            f"strategy => '{strategy}', options => map("
            "'min-input-files', '2', 'delete-file-threshold', '1', "
            "'partial-progress.enabled', 'false'))"
        ).first()
        if row and row["rewritten_data_files_count"]:
            report.actions.append(
                f"rewrite_data_files {strategy}: {row['rewritten_data_files_count']} -> "
                f"{row['added_data_files_count']}"
            )
    if report.actions and _state(spark, table).delete_files > 0:
        # compaction applied the deletes; the delete files it left dangling go too
        row = spark.sql(
            f"call {catalog}.system.rewrite_position_delete_files(table => '{quoted}', "
            "options => map('rewrite-all', 'true'))"
        ).first()
        if row and row["rewritten_delete_files_count"]:
            report.actions.append(f"rewrite_position_delete_files: {row[0]} -> {row[1]}")
    if not open_envs and _state(spark, table).manifests > 1:
        row = spark.sql(f"call {catalog}.system.rewrite_manifests('{quoted}')").first()
        if row and row["rewritten_manifests_count"]:
            report.actions.append(
                f"rewrite_manifests: {row['rewritten_manifests_count']} -> "
                f"{row['added_manifests_count']}"
            )

    if properties.get(GC_ENABLED, "true").lower() == "false":
        # A clone (or any table sharing files): Iceberg refuses expiry and orphan removal
        # on it, rightly: files it no longer needs may be another table's
        # (docs/decisions/0042-dbt-clone-on-iceberg.md).
        source = properties.get(CLONE_SOURCE)
        shares = f"a clone of {source}" if source else "gc.enabled=false"
        report.actions.append(f"expiry and orphan removal skipped: {shares}")
        report.after = _state(spark, table)
        return report

    stale = stale_clone_tags(spark, table, catalog=catalog)
    for tag in stale:  # a clone dropped outside floe, or one whose registration failed
        spark.sql(f"alter table {catalog}.{table} drop tag if exists `{tag}`")
    if stale:
        report.actions.append(f"stale clone tags dropped: {len(stale)}")
    # measured after compaction, so its snapshots count against the age policy too
    cutoff = (now or datetime.now()) - timedelta(milliseconds=policy.max_snapshot_age_ms)
    if peers is not None:
        tagged = _tag_peer_snapshots(spark, table, peers, catalog)
        if tagged:
            report.actions.append(f"kept peer snapshots: {len(tagged)}")
    snapshots_before = _state(spark, table).snapshots
    if snapshots_before > policy.keep_snapshots:
        spark.sql(
            f"call {catalog}.system.expire_snapshots(table => '{quoted}', "
            f"older_than => timestamp '{cutoff:%Y-%m-%d %H:%M:%S}', "
            f"retain_last => {policy.keep_snapshots})"
        ).collect()
        report.expired_snapshots = snapshots_before - _state(spark, table).snapshots
        if report.expired_snapshots:
            report.actions.append(f"expire_snapshots: {report.expired_snapshots}")

    orphan_cutoff = (now or datetime.now()) - timedelta(days=policy.orphan_age_days)
    if peers is not None and peers.files:
        orphans: list[Any] = _remove_orphans_but_peers(spark, table, orphan_cutoff, peers, catalog)
    else:
        orphans = spark.sql(
            f"call {catalog}.system.remove_orphan_files(table => '{quoted}', "
            f"older_than => timestamp '{orphan_cutoff:%Y-%m-%d %H:%M:%S}')"
        ).collect()
    report.orphans_removed = len(orphans)
    if orphans:
        report.actions.append(f"remove_orphan_files: {len(orphans)}")
    report.after = _state(spark, table)
    return report


def _open_env_branches(spark: SparkSession, table: str) -> list[str]:
    """Branches of open environments (floe.envs: env_<name>) on ``table``."""
    from floe.envs import BRANCH_PREFIX

    rows = spark.sql(f"select name from {table}.refs where type = 'BRANCH'").collect()
    return sorted(r[0] for r in rows if str(r[0]).startswith(BRANCH_PREFIX))


# --------------------------------------------------------------------------- erasure hygiene
# What GDPR erasure (floe.privacy, docs/privacy.md) needs on a table it changed: no
# snapshot but the current one, no data file with a deleted row, no manifest entry
# describing a removed file, no orphan. Unlike `maintain_table` these ignore the
# table's retention policy: an erased subject must not survive in time travel.


def _check_table(table: str) -> str:
    if not _TABLE_NAME.match(table):
        raise ValueError(f"table {table!r} is not schema.table (letters, digits, underscores)")
    return table.replace("'", "''")


def apply_row_deletes(spark: SparkSession, table: str, *, catalog: str = "lake") -> list[str]:
    """Rewrite every data file that has delete files (merge-on-read), then drop the
    delete files left dangling, so deleted rows no longer exist in any current file."""
    quoted = _check_table(table)
    actions: list[str] = []
    if _state(spark, table).delete_files == 0:
        return actions
    row = spark.sql(
        f"call {catalog}.system.rewrite_data_files(table => '{quoted}', options => map("
        "'delete-file-threshold', '1', 'partial-progress.enabled', 'false'))"
    ).first()
    if row and row["rewritten_data_files_count"]:
        actions.append(
            f"rewrite_data_files: {row['rewritten_data_files_count']} -> "
            f"{row['added_data_files_count']}"
        )
    if _state(spark, table).delete_files > 0:
        row = spark.sql(
            f"call {catalog}.system.rewrite_position_delete_files(table => '{quoted}', "
            "options => map('rewrite-all', 'true'))"
        ).first()
        if row and row["rewritten_delete_files_count"]:
            actions.append(f"rewrite_position_delete_files: {row[0]} -> {row[1]}")
    return actions


def rewrite_all_manifests(spark: SparkSession, table: str, *, catalog: str = "lake") -> int:
    """Rewrite the current manifests: they then list live files only (a manifest keeps
    a removed file's entry, column bounds included, until it is rewritten)."""
    quoted = _check_table(table)
    row = spark.sql(f"call {catalog}.system.rewrite_manifests('{quoted}')").first()
    return int(row["rewritten_manifests_count"]) if row else 0


def expire_all_but_current(
    spark: SparkSession, table: str, *, catalog: str = "lake", now: datetime | None = None
) -> int:
    """Expire every snapshot but the current one (files only they reference are
    deleted). Returns how many snapshots were expired. ``now`` is naive UTC (the
    session's time zone)."""
    quoted = _check_table(table)
    before = _state(spark, table).snapshots
    if before <= 1:
        return 0
    # A second ahead: a snapshot committed within the current second is expired too.
    cutoff = (now or datetime.now(UTC).replace(tzinfo=None)) + timedelta(seconds=1)
    spark.sql(
        f"call {catalog}.system.expire_snapshots(table => '{quoted}', "
        f"older_than => timestamp '{cutoff:%Y-%m-%d %H:%M:%S}', retain_last => 1)"
    ).collect()
    return before - _state(spark, table).snapshots


def remove_orphans_before(
    spark: SparkSession, table: str, cutoff: datetime, *, catalog: str = "lake"
) -> list[str]:
    """Delete files under the table's location that no metadata references and that
    were written before ``cutoff``, however recent (``cutoff`` is a naive UTC time).

    Iceberg's procedure refuses a cutoff younger than 24 hours because it cannot tell
    a file a concurrent writer is about to commit from garbage; its action API (used
    here) does not. Call it only while nothing else writes the table, with a cutoff
    no later than when this process started changing it: files written after the
    cutoff are never touched.
    """
    import calendar

    _check_table(table)
    jvm: Any = spark._jvm
    jsession = spark._jsparkSession
    iceberg_table = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(
        jsession, f"{catalog}.{table}"
    )
    millis = calendar.timegm(cutoff.timetuple()) * 1000 + cutoff.microsecond // 1000
    result = (
        jvm.org.apache.iceberg.spark.actions.SparkActions.get(jsession)
        .deleteOrphanFiles(iceberg_table)
        .olderThan(millis)
        .execute()
    )
    return [str(location) for location in result.orphanFileLocations()]
