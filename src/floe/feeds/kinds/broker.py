"""What the broker feed kinds (``kafka``, ``kinesis``) share: one base, small subclasses.

A broker kind is read from its brokers by positions (:func:`floe.feeds.consume.consume`),
never from landed files; it decodes like the ``stream`` kind (same registry path, same
raw columns) and adds the broker's coordinates. Everything but the per-broker
differences lives here (docs/streams.md):

- the option naming the topic or stream, its length limit and wording;
- the broker client (:mod:`floe.streams.kafka`, :mod:`floe.streams.kinesis`), built
  from the settings (brokers are configuration, never YAML) and kept per process so a
  continuous job reuses its connection;
- how done segment keys become positions, a record's sequence text, a data segment's
  ``<last>`` and the provenance columns.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Hashable, Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from floe.feeds.declarations import Feed, FeedError, check_identifier
from floe.feeds.kinds import stream
from floe.feeds.kinds.base import Batch, IngestContext

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from floe.feeds.consume import Bus
    from floe.feeds.files import LandedFile
    from floe.feeds.kinds.base import IngestResult
    from floe.runtime import Settings
    from floe.streams import Fetched, Record


class BrokerSource(Protocol):
    """A broker client of :mod:`floe.streams`: one bounded fetch from positions."""

    def fetch(
        self,
        positions: dict[str, Any],
        starting_position: str | datetime,
        *,
        max_records: int,
        max_bytes: int,
    ) -> Fetched: ...


# Provenance of every broker kind: the stream kind's envelope columns, with the
# landing-folder columns meaning the time floe read the record.
COMMON_PROVENANCE = {
    **{k: v for k, v in stream.PROVENANCE.items() if not k.startswith("ingest_")},
    "ingest_year": "Year floe read the record.",
    "ingest_month": "Month floe read the record.",
    "ingest_day": "Day floe read the record.",
    "ingest_hour": "Hour floe read the record.",
}

# One client per (kind, endpoint, topic/stream) per process: a continuous job reuses it.
_SOURCES: dict[Hashable, BrokerSource] = {}


class BrokerFeedKind(ABC):
    """A feed kind read from a broker; a subclass names the broker's differences."""

    KIND: ClassVar[str]  # meta.floe.kind, and the segment keys' scheme
    ADDRESS: ClassVar[str]  # the option naming the topic / stream
    ADDRESS_TEXT: ClassVar[str]  # what that option holds, for messages
    ADDRESS_MAX: ClassVar[int]  # the broker's name length limit
    SOURCE_TEXT: ClassVar[str]  # where records are read from, for messages
    START_WORD: ClassVar[str]  # <first> of a starting-position marker segment
    PROVENANCE: ClassVar[dict[str, str]]  # column -> description (the kind's own)
    CONSUMES: ClassVar[bool] = True  # read by consume(), not from landed files

    def __init__(self) -> None:
        self.OPTIONS = stream.OPTIONS | frozenset(
            {self.ADDRESS, "starting_position", "max_records", "max_bytes"}
        )

    # -- per broker ----------------------------------------------------------------

    @abstractmethod
    def positions(self, keys: Iterable[str]) -> dict[str, Any]:
        """Partition / shard -> where to resume, from the done segments' keys."""

    @abstractmethod
    def sequence(self, record: Record) -> str:
        """The record's ``_sequence_number``: unique per feed, ordered in a partition."""

    @abstractmethod
    def last(self, records: Sequence[Record]) -> str:
        """A data segment's ``<last>`` (docs/streams.md, "Positions")."""

    @abstractmethod
    def coordinates(self, rows: DataFrame, name: str) -> DataFrame:
        """``rows`` with the broker's coordinates as typed columns."""

    @abstractmethod
    def endpoint(self, feed: Feed, settings: Settings) -> Hashable:
        """The client's connection settings (FeedError when they are missing)."""

    @abstractmethod
    def open(self, endpoint: Any, name: str) -> BrokerSource:
        """A new client for topic / stream ``name`` at ``endpoint``."""

    # -- shared --------------------------------------------------------------------

    def address(self, feed: Feed) -> str:
        return str(feed.option(self.ADDRESS))

    def validate(self, feed: Feed) -> None:
        from floe.feeds.consume import batch_caps, starting_position

        stream.validate(feed)
        name = feed.option(self.ADDRESS)
        if not isinstance(name, str) or not name or "/" in name or len(name) > self.ADDRESS_MAX:
            raise FeedError(
                f"feed {feed.id} ({self.KIND}): declare meta.floe.{self.ADDRESS} "
                f"({self.ADDRESS_TEXT})"
            )
        check_identifier(feed.name, f"feed {feed.id}: name")
        starting_position(feed)
        batch_caps(feed)

    def source(self, feed: Feed, settings: Settings) -> BrokerSource:
        """The feed's client, opened once per process and endpoint."""
        endpoint = self.endpoint(feed, settings)
        key = (self.KIND, endpoint, self.address(feed))
        if key not in _SOURCES:
            _SOURCES[key] = self.open(endpoint, self.address(feed))
        return _SOURCES[key]

    def bus(self, feed: Feed, settings: Settings) -> Bus:
        """What :func:`floe.feeds.consume.consume` needs of this broker."""
        from floe.feeds.consume import Bus

        source = self.source(feed, settings)
        name = self.address(feed)

        def fetch(pos: dict[str, Any], start: str | datetime, records: int, size: int) -> Fetched:
            return source.fetch(pos, start, max_records=records, max_bytes=size)

        def coordinates(rows: DataFrame) -> DataFrame:
            return self.coordinates(rows, name)

        return Bus(
            self.KIND,
            name,
            self.positions,
            fetch,
            self.sequence,
            self.START_WORD,
            self.last,
            coordinates,
        )

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
        """One exactly-once micro-batch (:func:`floe.feeds.consume.consume`)."""
        from floe.feeds.consume import consume as run

        return run(
            spark,
            feed,
            self.bus(feed, settings),
            raw_exists=raw_exists,
            settings=settings,
            project_dir=project_dir,
            max_records=max_records,
            max_bytes=max_bytes,
        )

    def discover(self, feed: Feed, landing: Path) -> list[LandedFile]:
        """Nothing lands on disk for a broker kind."""
        return []

    def read(
        self, spark: SparkSession, feed: Feed, files: Sequence[LandedFile], ctx: IngestContext
    ) -> Batch:
        raise FeedError(
            f"feed {feed.id} ({self.KIND}) is read from its {self.SOURCE_TEXT} by "
            "consume(), not files"
        )

    def empty(self, spark: SparkSession, feed: Feed, ctx: IngestContext) -> DataFrame:
        return stream.empty(spark, feed, ctx)

    def provenance_docs(self, feed: Feed) -> dict[str, str]:
        return {**COMMON_PROVENANCE, **self.PROVENANCE}

    def field_docs(self, feed: Feed, project_dir: Path) -> dict[str, str]:
        return stream.field_docs(feed, project_dir)


def partition_column() -> Any:
    """The partition / shard part of ``_source_file`` (``scheme://name/<part>/range``)."""
    from pyspark.sql import functions as F

    return F.split(F.col("_source_file"), "/").getItem(3)
