"""The same Iceberg catalog, opened with pyiceberg: read any floe table without Spark."""

from __future__ import annotations

from typing import TYPE_CHECKING

from floe.runtime.settings import Settings

if TYPE_CHECKING:
    from pyiceberg.catalog.sql import SqlCatalog


def sqlalchemy_uri(settings: Settings) -> str:
    """Iceberg's JDBC URI as the SQLAlchemy URI pyiceberg's SqlCatalog wants."""
    uri = settings.catalog_uri
    if settings.is_sqlite:
        # Same file; pysqlite waits up to 30 s on a lock like Java's busy_timeout.
        return f"sqlite:///{settings.sqlite_path}?timeout=30"
    if uri.startswith("jdbc:postgresql://"):
        rest = uri.removeprefix("jdbc:postgresql://")
        auth = ""
        if settings.catalog_user:
            auth = (
                settings.catalog_user
                + (f":{settings.catalog_password}" if settings.catalog_password else "")
                + "@"
            )
        return f"postgresql+psycopg2://{auth}{rest}"
    raise ValueError(f"pyiceberg cannot open catalog URI {uri!r}")


def open_catalog(settings: Settings | None = None) -> SqlCatalog:
    """pyiceberg SqlCatalog on floe's catalog database and warehouse."""
    from pyiceberg.catalog.sql import SqlCatalog

    s = settings or Settings.from_env()
    return SqlCatalog(s.catalog_name, uri=sqlalchemy_uri(s), warehouse=s.warehouse)
