"""dbt's catalog (``catalog.json``) read in one pass from the Iceberg catalog.

dbt-spark builds the catalog with one ``DESCRIBE TABLE EXTENDED`` per relation
(Iceberg v2 tables do not support ``SHOW TABLE EXTENDED``), through Spark, and reports
no statistics for Iceberg tables. floe's catalog is a SQL database (the Iceberg JDBC
catalog, SQLite or PostgreSQL): one query lists every table and view of the catalog
with its current metadata file, and each metadata file (a small JSON document) gives the
columns, the comment and, for tables, the current snapshot's summary — row count, data
files, bytes, commit time. No Spark job runs. Feed sources (``schema: landing``: files,
not tables) get their declared columns, or their stream's registry fields, and the
count and size of their landed files.

The rows follow dbt's catalog contract (``get_catalog`` returns an agate table with
``table_database, table_schema, table_name, table_type, table_comment, table_owner,
column_name, column_index, column_type, column_comment`` and ``stats:<id>:label|value|
description|include``; see dbt-core's ``dbt/task/docs/generate.py``).
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from floe.runtime.settings import Settings

ROW_KEYS = (
    "table_database",
    "table_schema",
    "table_name",
    "table_type",
    "table_comment",
    "table_owner",
    "column_name",
    "column_index",
    "column_type",
    "column_comment",
)
STATS = {
    "row_count": ("Row count", "Rows in the current snapshot (Iceberg total-records)"),
    "num_files": ("Data files", "Data files in the current snapshot (total-data-files)"),
    "bytes": ("Bytes", "Size of the current snapshot's data files (total-files-size)"),
    "last_modified": ("Last snapshot", "Commit time of the current snapshot (UTC)"),
}
VIEW_STATS = {
    "last_modified": ("Last changed", "When the view's current version was created (UTC)")
}
LANDED_STATS = {
    "num_files": ("Landed files", "Files in the feed's landing folder"),
    "bytes": ("Bytes", "Size of the landed files"),
    "last_modified": ("Last landed", "Newest landed file's modification time (UTC)"),
}
_PRIMITIVES = {
    "long": "bigint",
    "int": "int",
    "integer": "int",
    "string": "string",
    "double": "double",
    "float": "float",
    "boolean": "boolean",
    "date": "date",
    "timestamp": "timestamp_ntz",
    "timestamptz": "timestamp",
    "timestamp_ns": "timestamp_ntz",
    "timestamptz_ns": "timestamp",
    "binary": "binary",
    "uuid": "string",
    "time": "bigint",
}


class CatalogUnavailable(RuntimeError):
    """The Iceberg catalog cannot be read directly (the caller falls back to DESCRIBE)."""


def spark_type(iceberg: Any) -> str:
    """An Iceberg type from metadata JSON (``"long"``, ``{"type": "struct", ...}``) as
    Spark SQL spells it (``bigint``, ``struct<a:int>``)."""
    if isinstance(iceberg, str):
        if iceberg.startswith(("decimal", "fixed")):
            return iceberg.replace(" ", "") if iceberg.startswith("decimal") else "binary"
        return _PRIMITIVES.get(iceberg, iceberg)
    kind = iceberg.get("type")
    if kind == "struct":
        fields = ",".join(f"{f['name']}:{spark_type(f['type'])}" for f in iceberg["fields"])
        return f"struct<{fields}>"
    if kind == "list":
        return f"array<{spark_type(iceberg['element'])}>"
    if kind == "map":
        return f"map<{spark_type(iceberg['key'])},{spark_type(iceberg['value'])}>"
    return str(kind)


def _read_json(location: str, io: Any) -> dict[str, Any]:
    """A metadata file; local ones read directly (pyiceberg's FileIO imports pyarrow)."""
    local = _local_path(location)
    if local is not None:
        data = local.read_bytes()
    else:
        with io().new_input(location).open() as stream:
            data = stream.read()
    if location.endswith(".gz.metadata.json") or data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return dict(json.loads(data))


def _local_path(location: str) -> Path | None:
    if location.startswith("file:"):
        return Path(unquote(urlparse(location).path))
    if "://" not in location:
        return Path(location)
    return None


def _schema(metadata: Mapping[str, Any], schema_id: Any) -> Mapping[str, Any]:
    for schema in metadata.get("schemas") or []:
        if schema.get("schema-id") == schema_id:
            return schema
    return metadata.get("schema") or {"fields": []}


def _stats(values: Mapping[str, Any], labels: Mapping[str, tuple[str, str]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in values.items():
        label, description = labels[key]
        out[f"stats:{key}:label"] = label
        out[f"stats:{key}:value"] = value
        out[f"stats:{key}:description"] = description
        out[f"stats:{key}:include"] = True
    return out


def _iso(ms: int | float) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def relation_rows(
    schema: str, name: str, kind: str, metadata: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """Catalog rows (one per column) of one Iceberg table or view's metadata."""
    properties = metadata.get("properties") or {}
    if kind == "view":
        version_id = metadata.get("current-version-id")
        version: Mapping[str, Any] = next(
            (v for v in metadata.get("versions") or [] if v.get("version-id") == version_id), {}
        )
        columns = _schema(metadata, version.get("schema-id")).get("fields") or []
        stats: dict[str, Any] = {}
        if version.get("timestamp-ms"):
            stats = _stats({"last_modified": _iso(version["timestamp-ms"])}, VIEW_STATS)
    else:
        columns = _schema(metadata, metadata.get("current-schema-id")).get("fields") or []
        snapshot_id = metadata.get("current-snapshot-id")
        snapshot = next(
            (s for s in metadata.get("snapshots") or [] if s.get("snapshot-id") == snapshot_id),
            None,
        )
        values: dict[str, Any] = {}
        if snapshot is not None:
            summary = snapshot.get("summary") or {}
            for key, field in (
                ("row_count", "total-records"),
                ("num_files", "total-data-files"),
                ("bytes", "total-files-size"),
            ):
                if field in summary:
                    values[key] = int(summary[field])
            values["last_modified"] = _iso(snapshot["timestamp-ms"])
        else:
            values = {"row_count": 0, "num_files": 0, "bytes": 0}
        stats = _stats(values, STATS)
    table = {
        "table_database": None,
        "table_schema": schema,
        "table_name": name,
        "table_type": kind,
        "table_comment": properties.get("comment"),
        "table_owner": properties.get("owner"),
    }
    return [
        {
            **table,
            "column_name": column["name"],
            "column_index": index,
            "column_type": spark_type(column["type"]),
            "column_comment": column.get("doc"),
            **stats,
        }
        for index, column in enumerate(columns, start=1)
    ]


def iceberg_rows(settings: Settings, schemas: Iterable[str]) -> list[dict[str, Any]]:
    """Catalog rows of every table and view in ``schemas``: one catalog query, then one
    metadata file per relation."""
    import sqlalchemy
    from pyiceberg.io import load_file_io

    from floe.runtime.catalog import sqlalchemy_uri

    wanted = {s.lower() for s in schemas}
    try:
        engine = sqlalchemy.create_engine(sqlalchemy_uri(settings))
    except (ValueError, ImportError, sqlalchemy.exc.SQLAlchemyError) as exc:
        raise CatalogUnavailable(str(exc)) from exc
    try:
        with engine.connect() as connection:
            columns = {
                c["name"].lower()
                for c in sqlalchemy.inspect(connection).get_columns("iceberg_tables")
            }
            kind = "iceberg_type" if "iceberg_type" in columns else "'TABLE'"
            result = connection.execute(
                sqlalchemy.text(
                    f"select table_namespace, table_name, metadata_location, {kind} "
                    "from iceberg_tables where catalog_name = :catalog"
                ),
                {"catalog": settings.catalog_name},
            )
            listed = [(str(r[0]), str(r[1]), str(r[2] or ""), str(r[3] or "")) for r in result]
    except sqlalchemy.exc.SQLAlchemyError as exc:
        raise CatalogUnavailable(f"cannot read the Iceberg catalog tables: {exc}") from exc
    finally:
        engine.dispose()

    def io() -> Any:
        return load_file_io(properties={"warehouse": settings.warehouse})

    rows: list[dict[str, Any]] = []
    for namespace, name, location, iceberg_type in listed:
        if str(namespace).lower() not in wanted or not location:
            continue
        kind_name = "view" if str(iceberg_type or "").upper() == "VIEW" else "table"
        rows.extend(relation_rows(str(namespace), str(name), kind_name, _read_json(location, io)))
    return rows


def feed_rows(sources: Iterable[Mapping[str, Any]], settings: Settings) -> list[dict[str, Any]]:
    """Catalog rows of feed sources: their declared (or registry) columns and landed files."""
    from floe.feeds.declarations import FeedError
    from floe.feeds.sources import feed_from_node
    from floe.lineage.feeds import feed_columns

    project = settings.dbt_project_dir()
    rows: list[dict[str, Any]] = []
    for source in sources:
        try:
            feed = feed_from_node(source)
        except FeedError:
            continue
        if feed is None:
            continue
        columns, _ = feed_columns(feed, project)
        folder = settings.landing / feed.landing
        files = [p for p in folder.rglob("*") if p.is_file()] if folder.is_dir() else []
        values: dict[str, Any] = {
            "num_files": len(files),
            "bytes": sum(p.stat().st_size for p in files),
        }
        if files:
            values["last_modified"] = _iso(max(p.stat().st_mtime for p in files) * 1000)
        table = {
            "table_database": None,
            "table_schema": str(source.get("schema") or "landing"),
            "table_name": str(source.get("identifier") or source["name"]),
            "table_type": f"feed ({feed.kind})",
            "table_comment": f"landed files under {feed.landing}/",
            "table_owner": None,
            **_stats(values, LANDED_STATS),
        }
        rows.extend(
            {
                **table,
                "column_name": name,
                "column_index": index,
                "column_type": typ or "string",
                "column_comment": None,
            }
            for index, (name, typ) in enumerate(columns.items(), start=1)
        )
    return rows


def catalog_table(rows: list[dict[str, Any]]) -> Any:
    """The agate table dbt expects from ``get_catalog``."""
    from dbt_common.clients.agate_helper import table_from_rows

    keys = list(ROW_KEYS)
    for row in rows:
        keys.extend(k for k in row if k not in keys)
    table = table_from_rows(
        [[row.get(k) for k in keys] for row in rows],
        keys,
        text_only_columns=[
            k for k in keys if k.startswith("table_") or k in ("column_name", "column_type")
        ],
    )
    return table


def landing_sources(relation_configs: Iterable[Any]) -> list[dict[str, Any]]:
    """Manifest sources (as dicts) among dbt's relation configs."""
    out = []
    for config in relation_configs:
        if getattr(config, "resource_type", None) != "source":
            continue
        to_dict = getattr(config, "to_dict", None)
        out.append(dict(to_dict(omit_none=False)) if callable(to_dict) else dict(vars(config)))
    return out
