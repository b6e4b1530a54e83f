"""`dbt clone` of an Iceberg table without copying a data file.

A clone is a new Iceberg table whose first snapshot *is* the source's current
snapshot: its metadata file is the source's current metadata, trimmed to that one
snapshot, with a table UUID and a location of its own, registered in the catalog
(docs/decisions/0042-dbt-clone-on-iceberg.md). Its manifests, data and delete files
stay where the source wrote them and are read from there; what the clone writes later
goes under its own location. Sequence numbers, schema and field ids, partition specs
and sort orders are the source's, so every file reads exactly as it does there.

Two tables then reference the same files, and each must not delete what the other
reads:

- the **source** keeps the cloned snapshot under a tag (``floe_clone__<schema>__<table>``
  of the clone), so its snapshot expiry keeps those files and its orphan removal never
  sees them as orphans; a clone of a clone tags every table whose files it reads
  (``floe.clone.origins``);
- the **clone** has ``gc.enabled=false``, Iceberg's own guard for a table that shares
  files (its ``snapshot`` procedure sets it): Iceberg refuses snapshot expiry with file
  deletion, orphan removal and ``drop ... purge`` on it. ``floe maintain`` skips those
  two steps on a clone and says so; dropping a clone through floe
  (:func:`drop_clone`) deletes only its own location and releases its tags.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# Table properties of a clone.
CLONE_SOURCE = "floe.clone.source"  # schema.table it was cloned from
CLONE_SNAPSHOT = "floe.clone.snapshot-id"  # the source's snapshot it started as
CLONE_ORIGINS = "floe.clone.origins"  # "schema.table@snapshot,...": whose files it reads
GC_ENABLED = "gc.enabled"
# A clone's own files live under <warehouse>/<schema>/.floe-clones/<table>-<uuid>: no
# table location (an identifier never starts with ".") is a prefix of it, and deleting
# that location when the clone is dropped deletes nothing another table owns.
CLONES_DIR = ".floe-clones"
TAG_PREFIX = "floe_clone__"
# Properties that pin where a table writes: the clone writes under its own location.
_LOCATION_PROPERTIES = frozenset(
    {
        "write.data.path",
        "write.metadata.path",
        "write.object-storage.path",
        "write.folder-storage.path",
    }
)
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class CloneError(Exception):
    """A clone floe cannot make as asked; the message says what to do."""


@dataclass(frozen=True)
class Origin:
    """A table whose files a clone reads, at the snapshot it reads them from."""

    table: str  # schema.table
    snapshot_id: int

    def render(self) -> str:
        return f"{self.table}@{self.snapshot_id}"


@dataclass(frozen=True)
class PreparedClone:
    """A clone's metadata file, written and ready to register as ``table``."""

    table: str  # schema.table
    metadata_file: str
    location: str
    source: str
    snapshot_id: int | None  # None: the source had no snapshot (an empty new table)


def table_name(schema: str, identifier: str) -> str:
    """``schema.identifier`` after checking both are plain identifiers (they reach SQL)."""
    for part in (schema, identifier):
        if not _IDENTIFIER.match(part or ""):
            raise CloneError(
                f"cannot clone {schema}.{identifier}: {part!r} is not a plain identifier "
                "(letters, digits, underscores); rename the model or its schema"
            )
    return f"{schema}.{identifier}"


def tag_of(clone: str) -> str:
    """The tag a clone keeps on each table whose files it reads."""
    return TAG_PREFIX + clone.replace(".", "__").lower()


def parse_origins(value: str | None) -> list[Origin]:
    """``floe.clone.origins`` as a list (empty for a table that is no clone).

    Each entry names a table that reaches SQL (its tags): an entry that is not
    ``schema.table@snapshot`` of plain identifiers is refused, not skipped, so a clone
    whose property was edited by hand fails loudly instead of losing a tag's guard.
    """
    origins = []
    for item in (value or "").split(","):
        if not item.strip():
            continue
        table, sep, snapshot = item.strip().rpartition("@")
        parts = table.split(".")
        if not (
            sep
            and snapshot.isdigit()
            and len(parts) == 2
            and all(_IDENTIFIER.match(p) for p in parts)
        ):
            raise CloneError(
                f"table property {CLONE_ORIGINS} has entry {item.strip()!r}, not "
                "schema.table@snapshot-id: restore it, or drop the clone and clone again"
            )
        origins.append(Origin(table, int(snapshot)))
    return origins


# Java exceptions that mean "no Iceberg table by that name" (missing, or a view or a
# non-Iceberg table); anything else (a catalog that cannot be reached) is raised.
_NOT_AN_ICEBERG_TABLE = (
    "NoSuchTableException",
    "NoSuchViewException",
    "NoSuchNamespaceException",
    "IllegalArgumentException",
)


def iceberg_table(spark: SparkSession, catalog: str, table: str) -> Any:
    """The Java Iceberg table ``catalog.table`` (refreshed), or None if there is no
    Iceberg table by that name. Any other failure is raised: callers decide from
    None that no clone reads a table's files, and must not on a transient error."""
    jvm: Any = spark._jvm
    try:
        loaded = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(
            spark._jsparkSession, f"{catalog}.{table}"
        )
    except Exception as exc:  # the Java exception: py4j's, or under pyspark's conversion
        java = getattr(exc, "java_exception", None) or getattr(exc, "_origin", None)
        if java is not None and str(java.getClass().getSimpleName()) in _NOT_AN_ICEBERG_TABLE:
            return None
        raise
    loaded.refresh()
    return loaded


def is_clone(properties: Any) -> bool:
    """Do these table properties (a dict or a Java map) belong to a floe clone?"""
    return bool(properties.get(CLONE_SOURCE))


def clone_metadata(
    metadata_json: str, *, location: str, source: str, origins: Iterable[Origin]
) -> str:
    """The clone's metadata (Iceberg's table-metadata JSON) from the source's current one.

    The current snapshot only (with its statistics), ``main`` pointing at it, no
    metadata log (a commit of the clone must never delete the source's metadata files),
    a new UUID and location, the source's properties less the ones that pin write paths,
    plus the clone's own.
    """
    doc = json.loads(metadata_json)
    current = doc.get("current-snapshot-id")
    if current is not None and int(current) < 0:
        current = None
    snapshots = [s for s in doc.get("snapshots", []) if s.get("snapshot-id") == current]
    properties = {
        key: value
        for key, value in (doc.get("properties") or {}).items()
        if key not in _LOCATION_PROPERTIES
    }
    properties.update(
        {
            GC_ENABLED: "false",
            CLONE_SOURCE: source,
            CLONE_SNAPSHOT: str(current if current is not None else -1),
            CLONE_ORIGINS: ",".join(origin.render() for origin in origins),
        }
    )
    doc.update(
        {
            "table-uuid": str(uuid.uuid4()),
            "location": location,
            "last-updated-ms": int(time.time() * 1000),
            "properties": properties,
            "snapshots": snapshots,
            "current-snapshot-id": current if current is not None else -1,
            "refs": {"main": {"snapshot-id": current, "type": "branch"}} if snapshots else {},
            "snapshot-log": [
                {"timestamp-ms": s["timestamp-ms"], "snapshot-id": s["snapshot-id"]}
                for s in snapshots
            ],
            "metadata-log": [],
        }
    )
    for key in ("statistics", "partition-statistics"):
        if key in doc:
            doc[key] = [s for s in doc[key] if s.get("snapshot-id") == current]
    return json.dumps(doc)


def prepare_clone(
    spark: SparkSession, source: str, target: str, *, catalog: str, warehouse: str
) -> PreparedClone:
    """Tag the source's current snapshot for ``target`` and write the clone's metadata.

    ``source`` and ``target`` are ``schema.table`` (:func:`table_name`). Nothing is
    registered yet: the caller registers :attr:`PreparedClone.metadata_file` as
    ``target`` (Iceberg's ``register_table``) after removing what stood there
    (:func:`drop_clone` for an earlier clone).
    """
    loaded = iceberg_table(spark, catalog, source)
    if loaded is None:
        raise CloneError(
            f"cannot clone {source}: it is not an Iceberg table of catalog {catalog} "
            "(build it in the state's target first)"
        )
    jvm: Any = spark._jvm
    metadata = loaded.operations().current()
    snapshot = metadata.currentSnapshot()
    snapshot_id = int(snapshot.snapshotId()) if snapshot is not None else None
    origins = parse_origins(loaded.properties().get(CLONE_ORIGINS))
    if snapshot_id is not None:
        origins = [Origin(source, snapshot_id), *origins]
    schema, name = target.split(".")
    location = f"{warehouse.rstrip('/')}/{schema}/{CLONES_DIR}/{name}-{uuid.uuid4().hex}"
    metadata_file = f"{location}/metadata/00000-{uuid.uuid4()}.metadata.json"
    text = clone_metadata(
        str(jvm.org.apache.iceberg.TableMetadataParser.toJson(metadata)),
        location=location,
        source=source,
        origins=origins,
    )
    # Parsed by Iceberg before it is written: a document it would not read fails here.
    parser = jvm.org.apache.iceberg.TableMetadataParser
    parser.write(parser.fromJson(metadata_file, text), loaded.io().newOutputFile(metadata_file))
    tag = tag_of(target)
    for origin in origins:
        spark.sql(
            f"alter table {catalog}.{origin.table} create or replace tag `{tag}` "
            f"as of version {int(origin.snapshot_id)}"
        )
    return PreparedClone(target, metadata_file, location, source, snapshot_id)


def release_tags(spark: SparkSession, clone: str, properties: Any, *, catalog: str) -> list[str]:
    """Drop the tags clone ``clone`` keeps on the tables whose files it reads.

    Returns the tables released; a table that no longer exists or no longer has the
    tag is skipped.
    """
    tag = tag_of(clone)
    released = []
    for origin in parse_origins(properties.get(CLONE_ORIGINS)):
        loaded = iceberg_table(spark, catalog, origin.table)
        if loaded is None or loaded.refs().get(tag) is None:
            continue
        spark.sql(f"alter table {catalog}.{origin.table} drop tag if exists `{tag}`")
        released.append(origin.table)
    return released


def drop_clone(spark: SparkSession, table: str, loaded: Any, *, catalog: str) -> None:
    """Drop clone ``table`` (the Java table ``loaded``): its catalog entry, the files
    under its own location, and the tags it keeps on its origins. Files it shares with
    its origins are theirs and stay."""
    properties = loaded.properties()
    location = str(loaded.location())
    spark.sql(f"drop table if exists {catalog}.{table}")  # no purge: the files are shared
    if f"/{CLONES_DIR}/" in location:
        jvm: Any = spark._jvm
        path = jvm.org.apache.hadoop.fs.Path(location)
        conf = spark._jsparkSession.sessionState().newHadoopConf()
        path.getFileSystem(conf).delete(path, True)
    release_tags(spark, table, properties, catalog=catalog)


def live_clones(spark: SparkSession, table: str, *, catalog: str, loaded: Any = None) -> list[str]:
    """The clones that read ``table``'s files: a clone tag on it whose clone exists and
    still names ``table`` among its origins (a tag left by a clone dropped outside floe
    does not count). ``loaded``: the Java table, if the caller has it."""
    readers = _clone_tags(spark, table, catalog=catalog, loaded=loaded)
    return sorted({clone for clones in readers.values() for clone in clones})


def stale_clone_tags(
    spark: SparkSession, table: str, *, catalog: str, loaded: Any = None
) -> list[str]:
    """Clone tags on ``table`` that no live clone stands behind: the clone was dropped
    outside floe, or its registration failed after the tag was made. They only keep
    old files alive; ``floe maintain`` drops them."""
    readers = _clone_tags(spark, table, catalog=catalog, loaded=loaded)
    return sorted(tag for tag, clones in readers.items() if not clones and _IDENTIFIER.match(tag))


def _clone_tags(
    spark: SparkSession, table: str, *, catalog: str, loaded: Any = None
) -> dict[str, list[str]]:
    """Each clone tag on ``table`` with the live clones it stands for."""
    loaded = loaded if loaded is not None else iceberg_table(spark, catalog, table)
    if loaded is None:
        return {}
    found: dict[str, list[str]] = {}
    for tag in [str(name) for name in loaded.refs().keySet()]:
        if not tag.startswith(TAG_PREFIX):
            continue
        found[tag] = []
        for clone in tag_clones(tag):
            reader = iceberg_table(spark, catalog, clone)
            if reader is None:
                continue
            origins = parse_origins(reader.properties().get(CLONE_ORIGINS))
            if any(origin.table.lower() == table.lower() for origin in origins):
                found[tag].append(clone)
    return found


def tag_clones(tag: str) -> list[str]:
    """The clone names a tag can stand for (a schema may itself contain ``__``)."""
    rest = tag[len(TAG_PREFIX) :]
    names = []
    for match in re.finditer("__", rest):
        schema, name = rest[: match.start()], rest[match.end() :]
        if _IDENTIFIER.match(schema) and _IDENTIFIER.match(name):
            names.append(f"{schema}.{name}")
    return names
