"""Move an Iceberg JDBC catalog's entries to another database (``floe catalog migrate``).

A laptop project keeps its catalog in SQLite; a shared one in PostgreSQL
(``docs/cluster.md``, "Catalog migration"). An Iceberg catalog entry is only a pointer
(namespace, name) -> current ``metadata.json``; the table itself — metadata, manifests,
data files — stays in the warehouse. So migrating copies the rows of
``iceberg_tables`` and ``iceberg_namespace_properties`` and nothing else:

- the same warehouse files afterwards (every metadata file is checked to exist first);
- idempotent: an entry already in the target with the same metadata file is left
  alone, so a second run copies nothing;
- all or nothing: an entry present in the target with *another* metadata file (the
  two catalogs have diverged) stops the migration before anything is written, naming
  each such table;
- views (Iceberg views, ``iceberg_type = 'VIEW'``) move like tables;
- afterwards pyiceberg loads every migrated table from the target and must find the
  same current snapshot as in the source;
- then the source is **retired** (a row in its ``floe_catalog_retired`` table naming the
  target): floe's writers refuse it from then on (the writer lock checks it, so
  ``dbt build``, ``floe build``/``stream``/``maintain`` and erasure all stop with a
  message naming the new catalog), and the target records the source as a *peer* on
  the same warehouse (``floe_catalog_peers``), whose files ``floe maintain`` on the
  target never deletes (docs/cluster.md, "Catalog migration").

The target's tables are created with Iceberg's own DDL (``JdbcUtil`` in
iceberg-core, schema version V1) when missing, so Spark's ``JdbcCatalog`` and
pyiceberg's ``SqlCatalog`` both accept them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

from floe.runtime.catalog import CatalogDatabase, open_catalog_at

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection, Engine

# Iceberg's JdbcUtil DDL (schema version V1: with iceberg_type, which views need).
CREATE_TABLES_SQL = (
    "CREATE TABLE iceberg_tables("
    "catalog_name VARCHAR(255) NOT NULL, table_namespace VARCHAR(255) NOT NULL, "
    "table_name VARCHAR(255) NOT NULL, metadata_location VARCHAR(1000), "
    "previous_metadata_location VARCHAR(1000), iceberg_type VARCHAR(5), "
    "PRIMARY KEY (catalog_name, table_namespace, table_name))"
)
CREATE_NAMESPACES_SQL = (
    "CREATE TABLE iceberg_namespace_properties("
    "catalog_name VARCHAR(255) NOT NULL, namespace VARCHAR(255) NOT NULL, "
    "property_key VARCHAR(255), property_value VARCHAR(1000), "
    "PRIMARY KEY (catalog_name, namespace, property_key))"
)
ADD_TYPE_COLUMN_SQL = "ALTER TABLE iceberg_tables ADD COLUMN iceberg_type VARCHAR(5)"
# floe's own bookkeeping beside Iceberg's tables in a catalog database.
RETIRED_TABLE = "floe_catalog_retired"
PEERS_TABLE = "floe_catalog_peers"
CREATE_RETIRED_SQL = (
    f"CREATE TABLE IF NOT EXISTS {RETIRED_TABLE}(catalog_name VARCHAR(255) NOT NULL, "
    "moved_to VARCHAR(1000) NOT NULL, moved_at VARCHAR(40) NOT NULL, "
    "PRIMARY KEY (catalog_name, moved_to))"
)
CREATE_PEERS_SQL = (
    f"CREATE TABLE IF NOT EXISTS {PEERS_TABLE}(catalog_name VARCHAR(255) NOT NULL, "
    "peer_uri VARCHAR(1000) NOT NULL, PRIMARY KEY (catalog_name, peer_uri))"
)


class CatalogMigrationError(RuntimeError):
    """The migration cannot proceed; nothing was written. The message says why and what to do."""


@dataclass(frozen=True)
class CatalogEntry:
    """One row of ``iceberg_tables``: a table or view and its current metadata file."""

    namespace: str
    name: str
    metadata_location: str
    previous_metadata_location: str | None
    kind: str  # TABLE or VIEW

    @property
    def identifier(self) -> str:
        return f"{self.namespace}.{self.name}"


@dataclass
class MigrationReport:
    """What a migration did: entries copied, entries already there, namespaces added."""

    source: str
    target: str
    copied: list[str] = field(default_factory=list)
    already_present: list[str] = field(default_factory=list)
    namespaces_copied: list[str] = field(default_factory=list)
    verified: list[str] = field(default_factory=list)
    dry_run: bool = False

    @property
    def changed(self) -> bool:
        return bool(self.copied or self.namespaces_copied)


def _engine(database: CatalogDatabase) -> Engine:
    from sqlalchemy import create_engine

    return create_engine(database.url())


def _has_catalog_tables(conn: Connection) -> tuple[bool, bool]:
    """(iceberg_tables exists, it has the iceberg_type column)."""
    from sqlalchemy import inspect

    inspector = inspect(conn)
    if not inspector.has_table("iceberg_tables"):
        return False, False
    columns = {c["name"].lower() for c in inspector.get_columns("iceberg_tables")}
    return True, "iceberg_type" in columns


def read_entries(conn: Connection, catalog_name: str) -> list[CatalogEntry]:
    """Every table and view of ``catalog_name`` in a catalog database."""
    from sqlalchemy import text

    exists, typed = _has_catalog_tables(conn)
    if not exists:
        return []
    kind = "iceberg_type" if typed else "NULL"
    rows = conn.execute(
        text(
            "SELECT table_namespace, table_name, metadata_location, "
            f"previous_metadata_location, {kind} FROM iceberg_tables "
            "WHERE catalog_name = :catalog ORDER BY table_namespace, table_name"
        ),
        {"catalog": catalog_name},
    )
    return [
        CatalogEntry(
            namespace=row[0],
            name=row[1],
            metadata_location=row[2],
            previous_metadata_location=row[3],
            kind=row[4] or "TABLE",
        )
        for row in rows
    ]


def read_namespace_properties(
    conn: Connection, catalog_name: str
) -> dict[tuple[str, str], str | None]:
    """(namespace, property key) -> value for ``catalog_name``."""
    from sqlalchemy import inspect, text

    if not inspect(conn).has_table("iceberg_namespace_properties"):
        return {}
    rows = conn.execute(
        text(
            "SELECT namespace, property_key, property_value FROM iceberg_namespace_properties "
            "WHERE catalog_name = :catalog"
        ),
        {"catalog": catalog_name},
    )
    return {(row[0], row[1]): row[2] for row in rows}


def _missing_metadata(entries: list[CatalogEntry]) -> list[str]:
    """Entries whose metadata file is local and absent (object stores are not checked)."""
    missing = []
    for entry in entries:
        parsed = urlparse(entry.metadata_location)
        if parsed.scheme in ("", "file") and not Path(unquote(parsed.path)).is_file():
            missing.append(f"{entry.identifier}: {entry.metadata_location}")
    return missing


def _ensure_target_tables(conn: Connection) -> None:
    from sqlalchemy import inspect, text

    exists, typed = _has_catalog_tables(conn)
    if not exists:
        conn.execute(text(CREATE_TABLES_SQL))
    elif not typed:
        conn.execute(text(ADD_TYPE_COLUMN_SQL))
    if not inspect(conn).has_table("iceberg_namespace_properties"):
        conn.execute(text(CREATE_NAMESPACES_SQL))


def migrate_catalog(
    source: CatalogDatabase,
    target: CatalogDatabase,
    *,
    catalog_name: str = "lake",
    warehouse: str,
    dry_run: bool = False,
) -> MigrationReport:
    """Copy ``catalog_name``'s entries from ``source`` to ``target`` (see the module doc).

    ``warehouse`` is only used to open both ends with pyiceberg for the verification
    (entries carry absolute metadata locations). Raises :class:`CatalogMigrationError`
    before writing anything when the source is missing, a metadata file is missing, or
    the target holds a different version of a table.
    """
    from sqlalchemy import text

    if source.uri == target.uri:
        raise CatalogMigrationError(f"source and target are the same catalog ({source.display})")
    if source.sqlite_path is not None and not source.sqlite_path.is_file():
        raise CatalogMigrationError(
            f"no SQLite catalog at {source.sqlite_path}: pass --from with the catalog to move"
        )
    report = MigrationReport(source=source.display, target=target.display, dry_run=dry_run)
    with _engine(source).connect() as conn:
        entries = read_entries(conn, catalog_name)
        namespaces = read_namespace_properties(conn, catalog_name)
    missing = _missing_metadata(entries)
    if missing:
        raise CatalogMigrationError(
            "these entries point at metadata files that do not exist, so the warehouse is not "
            "where the catalog says; nothing was migrated:\n  " + "\n  ".join(missing)
        )

    engine = _engine(target)
    try:
        with engine.begin() as conn:
            _ensure_target_tables(conn)
            present = {(e.namespace, e.name): e for e in read_entries(conn, catalog_name)}
            conflicts = [
                f"{e.identifier}: source {e.metadata_location}, "
                f"target {present[(e.namespace, e.name)].metadata_location}"
                for e in entries
                if (e.namespace, e.name) in present
                and present[(e.namespace, e.name)].metadata_location != e.metadata_location
            ]
            if conflicts:
                raise CatalogMigrationError(
                    "the target already holds other versions of these tables (the catalogs "
                    "have diverged); nothing was migrated. Drop them from the target, or "
                    "migrate into an empty catalog:\n  " + "\n  ".join(conflicts)
                )
            target_namespaces = read_namespace_properties(conn, catalog_name)
            new_namespaces = {k: v for k, v in namespaces.items() if k not in target_namespaces}
            new_entries = [e for e in entries if (e.namespace, e.name) not in present]
            report.already_present = [e.identifier for e in entries if e not in new_entries]
            report.copied = [e.identifier for e in new_entries]
            report.namespaces_copied = sorted({ns for ns, _ in new_namespaces})
            if dry_run:
                conn.rollback()
                return report
            for (namespace, key), value in new_namespaces.items():
                conn.execute(
                    text(
                        "INSERT INTO iceberg_namespace_properties "
                        "(catalog_name, namespace, property_key, property_value) "
                        "VALUES (:catalog, :namespace, :key, :value)"
                    ),
                    {"catalog": catalog_name, "namespace": namespace, "key": key, "value": value},
                )
            for entry in new_entries:
                conn.execute(
                    text(
                        "INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, "
                        "metadata_location, previous_metadata_location, iceberg_type) "
                        "VALUES (:catalog, :namespace, :name, :location, :previous, :kind)"
                    ),
                    _row(catalog_name, entry),
                )
    finally:
        engine.dispose()
    report.verified = verify_migration(
        source, target, entries, catalog_name=catalog_name, warehouse=warehouse
    )
    _record_move(source, target, catalog_name)
    return report


def _record_move(source: CatalogDatabase, target: CatalogDatabase, catalog_name: str) -> None:
    """Retire the source (floe's writers refuse it) and make it a peer of the target
    (the target's maintenance keeps its files). Idempotent."""
    from datetime import UTC, datetime

    from sqlalchemy import text

    moved_at = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    engine = _engine(target)
    try:
        with engine.begin() as conn:
            conn.execute(text(CREATE_PEERS_SQL))
            known = {row[0] for row in conn.execute(text(f"SELECT peer_uri FROM {PEERS_TABLE}"))}
            if source.uri not in known:
                conn.execute(
                    text(f"INSERT INTO {PEERS_TABLE} (catalog_name, peer_uri) VALUES (:c, :u)"),
                    {"c": catalog_name, "u": source.uri},
                )
    finally:
        engine.dispose()
    engine = _engine(source)
    try:
        with engine.begin() as conn:
            conn.execute(text(CREATE_RETIRED_SQL))
            moved = conn.execute(
                text(f"SELECT 1 FROM {RETIRED_TABLE} WHERE catalog_name = :c AND moved_to = :t"),
                {"c": catalog_name, "t": _public_uri(target)},
            ).first()
            if moved is None:
                conn.execute(
                    text(
                        f"INSERT INTO {RETIRED_TABLE} (catalog_name, moved_to, moved_at) "
                        "VALUES (:c, :t, :at)"
                    ),
                    {"c": catalog_name, "t": _public_uri(target), "at": moved_at},
                )
    finally:
        engine.dispose()


def _public_uri(database: CatalogDatabase) -> str:
    """The JDBC URI to set as FLOE_CATALOG_URI, without a password in its query."""
    from urllib.parse import parse_qsl, urlencode

    base, _, query = database.uri.partition("?")
    kept = [(k, v) for k, v in parse_qsl(query) if k.lower() != "password"]
    return f"{base}?{urlencode(kept)}" if kept else base


def retirement(database: CatalogDatabase, catalog_name: str) -> str | None:
    """Where ``catalog_name`` in ``database`` was moved to (and when), if it was retired."""
    from sqlalchemy import inspect, text

    if database.sqlite_path is not None and not database.sqlite_path.is_file():
        return None  # a new warehouse: nothing to read, and no file to create
    engine = _engine(database)
    try:
        with engine.connect() as conn:
            if not inspect(conn).has_table(RETIRED_TABLE):
                return None
            rows = conn.execute(
                text(
                    f"SELECT moved_to, moved_at FROM {RETIRED_TABLE} "
                    "WHERE catalog_name = :c ORDER BY moved_at"
                ),
                {"c": catalog_name},
            ).all()
    finally:
        engine.dispose()
    return "; ".join(f"{to} on {at}" for to, at in rows) or None


def peer_catalogs(database: CatalogDatabase, catalog_name: str) -> list[str]:
    """JDBC URIs of the other catalogs on this catalog's warehouse (migration sources)."""
    from sqlalchemy import inspect, text

    if database.sqlite_path is not None and not database.sqlite_path.is_file():
        return []
    engine = _engine(database)
    try:
        with engine.connect() as conn:
            if not inspect(conn).has_table(PEERS_TABLE):
                return []
            rows = conn.execute(
                text(f"SELECT peer_uri FROM {PEERS_TABLE} WHERE catalog_name = :c"),
                {"c": catalog_name},
            )
            return sorted(row[0] for row in rows)
    finally:
        engine.dispose()


def _row(catalog_name: str, entry: CatalogEntry) -> dict[str, Any]:
    return {
        "catalog": catalog_name,
        "namespace": entry.namespace,
        "name": entry.name,
        "location": entry.metadata_location,
        "previous": entry.previous_metadata_location,
        "kind": entry.kind,
    }


def verify_migration(
    source: CatalogDatabase,
    target: CatalogDatabase,
    entries: list[CatalogEntry],
    *,
    catalog_name: str,
    warehouse: str,
) -> list[str]:
    """pyiceberg loads every migrated table from both ends: same metadata, same snapshot.

    Returns the verified table identifiers; raises :class:`CatalogMigrationError` naming
    each table that differs. Views are checked by their catalog row (pyiceberg does not
    load views).
    """
    src = open_catalog_at(source, warehouse, catalog_name)
    dst = open_catalog_at(target, warehouse, catalog_name)
    problems: list[str] = []
    verified: list[str] = []
    try:
        with _engine(target).connect() as conn:
            target_rows = {(e.namespace, e.name): e for e in read_entries(conn, catalog_name)}
        for entry in entries:
            row = target_rows.get((entry.namespace, entry.name))
            if row is None or row.metadata_location != entry.metadata_location:
                problems.append(f"{entry.identifier}: not in the target after the migration")
                continue
            if entry.kind != "TABLE":
                continue
            identifier = (entry.namespace, entry.name)
            before, after = src.load_table(identifier), dst.load_table(identifier)
            if (
                before.metadata_location != after.metadata_location
                or before.metadata.current_snapshot_id != after.metadata.current_snapshot_id
            ):
                problems.append(f"{entry.identifier}: pyiceberg reads another version")
                continue
            verified.append(entry.identifier)
    finally:
        src.close()
        dst.close()
    if problems:
        raise CatalogMigrationError("verification failed:\n  " + "\n  ".join(problems))
    return verified
