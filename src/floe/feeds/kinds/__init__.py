"""Feed kinds: a typed plug-in per landing layout, and the registry naming them (docs/feeds.md).

A kind is a module that satisfies :class:`FeedKind` (mypy checks every entry of
:data:`KINDS`). Adding a kind is one module and one line in :data:`KINDS`, as pyiceberg
maps catalog types to implementations: no name is turned into an import at run time.
Demo data of a kind is the generator's business (:mod:`floe.generator.writers`), and
its registry lookups are the registry's (:mod:`floe.registry.local`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, cast

from floe.feeds.declarations import Feed, FeedError
from floe.feeds.files import LandedFile
from floe.feeds.kinds import csv_loads, dms, flagged_csv, kafka, kinesis, reference, stream
from floe.feeds.kinds.base import Batch, IngestContext

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from floe.feeds.kinds.base import IngestResult
    from floe.runtime.settings import Settings


class FeedKind(Protocol):
    """What the generic ingest path (:func:`floe.feeds.ingest.ingest`) needs of a kind."""

    # The ``meta.floe`` options the kind understands beyond the common ones.
    OPTIONS: frozenset[str]

    def validate(self, feed: Feed) -> None:
        """Raise :class:`~floe.feeds.FeedError` on a bad declaration of this kind."""
        ...

    def discover(self, feed: Feed, landing: Path) -> list[LandedFile]:
        """The feed's landed files (ledger key, per-file attributes), in apply order."""
        ...

    def read(
        self, spark: SparkSession, feed: Feed, files: Sequence[LandedFile], ctx: IngestContext
    ) -> Batch:
        """Raw rows, per-file counts and quarantined records of ``files``."""
        ...

    def empty(self, spark: SparkSession, feed: Feed, ctx: IngestContext) -> DataFrame:
        """The raw table's shape with no rows."""
        ...

    def provenance_docs(self, feed: Feed) -> dict[str, str]:
        """Descriptions of the columns the kind adds to the raw table."""
        ...


# Kind name (``meta.floe.kind``) -> implementation. One line per kind.
KINDS: dict[str, FeedKind] = {
    "csv_loads": csv_loads,
    "dms": dms,
    "flagged_csv": flagged_csv,
    "kafka": kafka.KAFKA,
    "kinesis": kinesis.KINESIS,
    "reference": reference,
    "stream": stream,
}


def feed_kind(kind: str, kinds: Mapping[str, FeedKind] = KINDS) -> FeedKind:
    """The implementation of feed kind ``kind``; FeedError names the known kinds."""
    try:
        return kinds[kind]
    except KeyError:
        raise FeedError(f"unknown feed kind {kind!r}; known: {', '.join(kinds)}") from None


class BrokerKind(FeedKind, Protocol):
    """A kind read from a broker (Kafka, Kinesis) by positions, not from landed files."""

    CONSUMES: bool

    def consume(
        self,
        spark: SparkSession,
        feed: Feed,
        *,
        raw_exists: bool,
        settings: Settings,
        project_dir: Path,
        max_records: int | None = None,
        max_bytes: int | None = None,
    ) -> IngestResult:
        """One exactly-once micro-batch (rows and positions in one commit)."""
        ...


def broker_kind(kind: str, kinds: Mapping[str, FeedKind] = KINDS) -> BrokerKind | None:
    """The implementation of ``kind`` when it reads a broker (docs/streams.md), else None."""
    implementation = feed_kind(kind, kinds)
    if getattr(implementation, "CONSUMES", False):
        return cast("BrokerKind", implementation)
    return None


__all__ = ["KINDS", "Batch", "BrokerKind", "FeedKind", "IngestContext", "broker_kind", "feed_kind"]
