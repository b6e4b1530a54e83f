"""What every feed kind shares: the ingest context, a batch, typed columns, demo lookup."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from floe.feeds import ledger
from floe.feeds.declarations import Feed, FeedError
from floe.feeds.ledger import FileCounts

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from floe.runtime import Settings

_DEMO_NAME = re.compile(r"^[a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*$")


@dataclass(frozen=True)
class IngestContext:
    """Where the landing zone, engine state and project are, and the batch's ingest time
    and load sequence (:func:`floe.feeds.ledger.next_load_seq`; 0 until allocated)."""

    settings: Settings
    ingested_at: str
    project_dir: Path
    load_seq: int = 0

    @property
    def landing(self) -> Path:
        return self.settings.landing

    @property
    def state_dir(self) -> Path:
        return self.settings.state_dir


@dataclass
class Batch:
    """What a kind read from new files: raw rows, per-file counts, quarantined records."""

    rows: DataFrame
    counts: Mapping[str, FileCounts]
    quarantine: DataFrame | None = None
    notes: dict[str, Any] = field(default_factory=dict)


def spark_schema(columns: list[tuple[str, str]]) -> Any:
    """A StructType from (name, Spark SQL type) pairs."""
    from pyspark.sql.types import StructType, _parse_datatype_string

    struct = StructType()
    for name, typ in columns:
        try:
            struct.add(name, _parse_datatype_string(typ), True)
        except Exception as exc:  # pyspark raises several types for a bad type string
            raise FeedError(f"column {name}: {typ!r} is not a Spark SQL type ({exc})") from exc
    return struct


def require_columns(feed: Feed) -> list[tuple[str, str]]:
    """The feed's declared, typed columns (the landing contract of file-based kinds)."""
    return feed.column_types()


@dataclass
class IngestResult:
    """What one ingest call read: the new rows and the files they came from."""

    rows: DataFrame
    files: list[str] = field(default_factory=list)
    counts: dict[str, FileCounts] = field(default_factory=dict)


def context(settings: Settings, project_dir: Path) -> IngestContext:
    return IngestContext(
        settings=settings, ingested_at=ledger.batch_time(), project_dir=project_dir
    )


def with_load_seq(spark: SparkSession, ctx: IngestContext) -> IngestContext:
    """``ctx`` with the batch's load sequence allocated (ledger.next_load_seq)."""
    return dataclasses.replace(ctx, load_seq=ledger.next_load_seq(spark))
