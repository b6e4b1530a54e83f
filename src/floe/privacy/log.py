"""``audit.erasure_log``: one row per erasure or rectification, written as it goes.

The row is the journal that makes an erasure crash-safe (docs/privacy.md):

1. ``planned`` — before anything changes: the tables to change with the rows
   expected and each table's snapshot id before, the landed files found;
2. ``erased`` — every table changed: rows removed and the snapshot id of each change;
3. ``complete`` — landing, ledger and snapshot hygiene done.

A run that finds an unfinished row for the same operation and subject resumes it
under the same id; the row is written by ``MERGE`` on the id, so an erasure is
recorded once however often it was interrupted. The subject appears only as a
salted hash (its key name in clear), never as a value.
"""

from __future__ import annotations

import uuid
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

LOG_TABLE = "audit.erasure_log"
STATUSES = ("planned", "erased", "complete")

TABLE_TYPE = (
    "struct<table_name: string, rows: bigint, snapshot_before: bigint, snapshot_id: bigint, "
    "committed_at: timestamp, history_only: boolean>"
)
FILE_TYPE = (
    "struct<feed: string, path: string, records: bigint, ingested: boolean, "
    "rewritten: boolean, sha256_before: string, sha256_after: string>"
)
MAINTENANCE_TYPE = "struct<table_name: string, actions: string>"
COLUMNS = (
    ("erasure_id", "string"),
    ("operation", "string"),
    ("subject_key", "string"),
    ("subject_hash", "string"),
    ("spec_hash", "string"),
    ("status", "string"),
    ("requested_at", "timestamp"),
    ("updated_at", "timestamp"),
    ("completed_at", "timestamp"),
    ("tables", f"array<{TABLE_TYPE}>"),
    ("landed_files", f"array<{FILE_TYPE}>"),
    ("maintenance", f"array<{MAINTENANCE_TYPE}>"),
    ("columns_set", "array<string>"),
    ("detail", "string"),
)
DDL = ", ".join(f"{name} {typ}" for name, typ in COLUMNS)


def utc_now() -> datetime:
    """Now, naive UTC (floe's sessions run in UTC)."""
    return datetime.now(UTC).replace(tzinfo=None)


@dataclass
class TableEntry:
    table_name: str
    rows: int
    snapshot_before: int | None = None
    snapshot_id: int | None = None
    committed_at: datetime | None = None
    history_only: bool = False


@dataclass
class FileEntry:
    feed: str
    path: str
    records: int
    ingested: bool
    rewritten: bool = False
    sha256_before: str | None = None
    sha256_after: str | None = None


@dataclass
class MaintenanceEntry:
    table_name: str
    actions: str


@dataclass
class LogRow:
    """One erasure (or rectification) as recorded."""

    operation: str
    subject_key: str
    subject_hash: str
    spec_hash: str = ""
    erasure_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    status: str = "planned"
    requested_at: datetime = field(default_factory=utc_now)
    updated_at: datetime = field(default_factory=utc_now)
    completed_at: datetime | None = None
    tables: list[TableEntry] = field(default_factory=list)
    landed_files: list[FileEntry] = field(default_factory=list)
    maintenance: list[MaintenanceEntry] = field(default_factory=list)
    columns_set: list[str] = field(default_factory=list)
    detail: str = ""

    def table(self, name: str) -> TableEntry | None:
        return next((t for t in self.tables if t.table_name == name), None)

    def as_record(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_row(cls, row: Any) -> LogRow:
        data = row.asDict(recursive=True)
        return cls(
            operation=data["operation"],
            subject_key=data["subject_key"],
            subject_hash=data["subject_hash"],
            spec_hash=data["spec_hash"] or "",
            erasure_id=data["erasure_id"],
            status=data["status"],
            requested_at=data["requested_at"],
            updated_at=data["updated_at"],
            completed_at=data["completed_at"],
            tables=[TableEntry(**t) for t in data["tables"] or []],
            landed_files=[FileEntry(**f) for f in data["landed_files"] or []],
            maintenance=[MaintenanceEntry(**m) for m in data["maintenance"] or []],
            columns_set=list(data["columns_set"] or []),
            detail=data["detail"] or "",
        )


class ErasureLog:
    """Reads and writes ``audit.erasure_log`` in one SparkSession."""

    def __init__(self, spark: SparkSession, table: str = LOG_TABLE) -> None:
        self.spark = spark
        self.table = table

    def exists(self) -> bool:
        return bool(self.spark.catalog.tableExists(self.table))

    def ensure(self) -> None:
        self.spark.sql(
            f"create table if not exists {self.table} ({DDL}) using iceberg "
            "tblproperties ('format-version' = '2')"
        )

    def rows(self, operation: str, subject_hash: str) -> list[LogRow]:
        """Every row of ``operation`` for the subject, oldest first."""
        from pyspark.sql import functions as F

        if not self.exists():
            return []
        found = (
            self.spark.table(self.table)
            .where((F.col("operation") == operation) & (F.col("subject_hash") == subject_hash))
            .orderBy("requested_at")
            .collect()
        )
        return [LogRow.from_row(r) for r in found]

    def pending(self, operation: str, subject_hash: str, spec_hash: str = "") -> LogRow | None:
        for row in reversed(self.rows(operation, subject_hash)):
            if row.status != "complete" and row.spec_hash == spec_hash:
                return row
        return None

    def last_complete(self, operation: str, subject_hash: str) -> LogRow | None:
        done = [r for r in self.rows(operation, subject_hash) if r.status == "complete"]
        return done[-1] if done else None

    def write(self, row: LogRow) -> None:
        """Insert or replace the row with ``row.erasure_id`` (one commit)."""
        from pyspark.sql.types import _parse_datatype_string

        self.ensure()
        row.updated_at = utc_now()
        schema: Any = _parse_datatype_string(
            f"struct<{', '.join(f'{n}: {t}' for n, t in COLUMNS)}>"
        )
        record = row.as_record()
        frame = self.spark.createDataFrame([tuple(record[n] for n, _ in COLUMNS)], schema)
        view = f"floe_erasure_log_{uuid.uuid4().hex}"
        frame.createOrReplaceTempView(view)
        try:
            self.spark.sql(
                f"merge into {self.table} as t using {view} as s "
                "on t.erasure_id = s.erasure_id "
                "when matched then update set * when not matched then insert *"
            )
        finally:
            self.spark.catalog.dropTempView(view)
