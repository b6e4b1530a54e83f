"""The same Iceberg catalog, opened with pyiceberg: read any floe table without Spark.

Iceberg's JDBC catalog (what Spark uses) and pyiceberg's ``SqlCatalog`` keep their
entries in the same two tables (``iceberg_tables``, ``iceberg_namespace_properties``),
so one database serves both. This module turns the JDBC URI Spark is given into the
SQLAlchemy URL pyiceberg wants: SQLite on ``local``, PostgreSQL (psycopg2) on
``cluster`` (``docs/runtime.md``, "Catalog"; ``docs/cluster.md``).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, urlsplit

from floe.runtime.settings import Settings, sqlite_file

if TYPE_CHECKING:
    from pyiceberg.catalog.sql import SqlCatalog
    from sqlalchemy.engine import URL


class CatalogUriError(ValueError):
    """A catalog URI floe cannot open; the message says which forms it takes."""


@dataclass(frozen=True)
class CatalogDatabase:
    """Where one Iceberg JDBC catalog keeps its entries: a JDBC URI plus credentials."""

    uri: str
    user: str | None = None
    password: str | None = field(default=None, repr=False)

    @classmethod
    def of(cls, settings: Settings) -> CatalogDatabase:
        """The catalog database ``settings`` point at (``FLOE_CATALOG_URI`` and credentials)."""
        return cls(settings.catalog_uri, settings.catalog_user, settings.catalog_password)

    @property
    def is_sqlite(self) -> bool:
        return self.uri.startswith("jdbc:sqlite:")

    @property
    def sqlite_path(self) -> Path | None:
        return sqlite_file(self.uri)

    @property
    def display(self) -> str:
        """The URI without any password, for messages and logs."""
        if self.is_sqlite:
            return self.uri
        return self.url().render_as_string(hide_password=True)

    def url(self) -> URL:
        """The SQLAlchemy URL of the same database (pyiceberg's ``SqlCatalog`` takes it)."""
        from sqlalchemy.engine import URL

        if self.is_sqlite:
            # Same file; pysqlite waits up to 30 s on a lock like Java's busy_timeout.
            return URL.create("sqlite", database=str(self.sqlite_path), query={"timeout": "30"})
        if not self.uri.startswith("jdbc:postgresql://"):
            raise CatalogUriError(
                f"floe cannot open catalog URI {self.uri!r}: use "
                "jdbc:sqlite:/path/catalog.db or jdbc:postgresql://host:port/database"
            )
        parts = urlsplit(self.uri.removeprefix("jdbc:"))
        if "," in parts.netloc:
            raise CatalogUriError(
                f"catalog URI {self.uri!r} names several hosts; floe takes one host:port"
            )
        database = parts.path.lstrip("/")
        if not parts.hostname or not database:
            raise CatalogUriError(
                f"catalog URI {self.uri!r} needs a host and a database: "
                "jdbc:postgresql://host:port/database"
            )
        query = dict(parse_qsl(parts.query))
        # The JDBC driver takes credentials as URI parameters too; explicit ones win.
        user = self.user or query.pop("user", None) or parts.username
        password = self.password or query.pop("password", None) or parts.password
        query.pop("user", None)
        query.pop("password", None)
        return URL.create(
            "postgresql+psycopg2",
            username=user,
            password=password,
            host=parts.hostname,
            port=parts.port,
            database=database,
            query=query,
        )


def sqlalchemy_uri(settings: Settings) -> str:
    """Iceberg's JDBC URI as the SQLAlchemy URI pyiceberg's SqlCatalog wants."""
    return CatalogDatabase.of(settings).url().render_as_string(hide_password=False)


def open_catalog(settings: Settings) -> SqlCatalog:
    """pyiceberg SqlCatalog on floe's catalog database and warehouse."""
    s = settings
    return open_catalog_at(CatalogDatabase.of(s), s.warehouse, s.catalog_name)


def open_catalog_at(database: CatalogDatabase, warehouse: str, name: str = "lake") -> SqlCatalog:
    """pyiceberg SqlCatalog on any catalog database (e.g. both ends of a migration)."""
    from pyiceberg.catalog.sql import SqlCatalog

    uri = database.url().render_as_string(hide_password=False)
    return SqlCatalog(name, uri=uri, warehouse=warehouse)


@dataclass(frozen=True)
class NamespaceListing:
    """A namespace's Iceberg tables and views, as ``show tables`` / ``show views`` give."""

    tables: list[str]
    views: list[str]


# SQLite catalogs seen with Iceberg's V1 schema: a catalog is migrated once and never
# back, so the probe runs once per catalog file and process, not once per listing.
_TYPED_CATALOGS: set[Path] = set()


def _sqlite_rows(settings: Settings, sql: str, params: tuple[str, ...]) -> list[tuple] | None:
    """Rows of ``sql`` on the SQLite catalog, read-only; None when there is no SQLite
    catalog with Iceberg's V1 tables (its ``iceberg_type`` column) to read."""
    import sqlite3

    path = CatalogDatabase.of(settings).sqlite_path
    if path is None or not path.is_file():
        return None
    uri = f"{path.as_uri()}?mode=ro"
    try:
        with contextlib.closing(sqlite3.connect(uri, uri=True, timeout=30)) as db:
            if path not in _TYPED_CATALOGS:
                typed = db.execute(
                    "select count(*) from pragma_table_info('iceberg_tables') "
                    "where name = 'iceberg_type'"
                ).fetchone()
                if not typed or typed[0] != 1:
                    return None
                _TYPED_CATALOGS.add(path)
            return db.execute(sql, params).fetchall()
    except sqlite3.Error:
        return None


def list_namespace(settings: Settings, namespace: str) -> NamespaceListing | None:
    """``namespace``'s tables and views read from the SQLite catalog without Spark (the
    same rows Spark's ``show tables``/``show views`` read); None: ask Spark instead."""
    rows = _sqlite_rows(
        settings,
        "select table_name, iceberg_type from iceberg_tables "
        "where catalog_name = ? and table_namespace = ?",
        (settings.catalog_name, namespace),
    )
    if rows is None:
        return None
    views = sorted(str(name) for name, kind in rows if str(kind).upper() == "VIEW")
    tables = sorted(str(name) for name, kind in rows if str(kind).upper() != "VIEW")
    return NamespaceListing(tables, views)


def list_namespaces(settings: Settings) -> list[str] | None:
    """The catalog's top-level namespaces read from SQLite without Spark (None: ask Spark)."""
    rows = _sqlite_rows(
        settings,
        "select namespace from iceberg_namespace_properties where catalog_name = ? "
        "union select table_namespace from iceberg_tables where catalog_name = ?",
        (settings.catalog_name, settings.catalog_name),
    )
    if rows is None:
        return None
    return sorted({str(row[0]).split(".", 1)[0] for row in rows if row[0]})
