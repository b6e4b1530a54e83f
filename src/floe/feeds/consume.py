"""Consume a broker-backed feed (kinds ``kafka``, ``kinesis``) exactly once.

Positions live in the ingestion ledger, not in the broker (docs/streams.md): every
micro-batch reads a bounded range per partition (shard) and names each range a
*segment* (:func:`floe.streams.segment_key`). A segment is one ledger entry, as a
landed file is: its quarantine and ``raw.landed_files`` rows are written before the
raw rows, and it is done once ``raw.<feed>`` holds its rows (or the ledger says it
loaded none). So the positions to resume from are read back from the tables:

* a crash before the raw commit leaves its segments not done — their ledger rows
  are removed by the next batch (:func:`_forget_unfinished`) and the range is read
  again, from the same position;
* a crash after it finds them done and resumes after them;
* nothing is committed to the broker, so its committed offsets never matter.

Positions are data rows: ``floe maintain`` (snapshot expiry) and a catalog
migration keep them. Offsets that expired before they were read become a ``gap``
segment and a row of ``raw.stream_gaps`` (counted, never skipped silently).
"""

from __future__ import annotations

import base64
import functools
import json
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from floe.feeds import ledger
from floe.feeds.declarations import Feed, FeedError
from floe.feeds.files import LandedFile
from floe.runtime.frames import local_frame
from floe.streams import Fetched, Gap, Record, arrival_text, parse_segment_key, segment_key

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from floe.feeds.kinds.base import IngestResult
    from floe.runtime import Settings

GAPS = "raw.stream_gaps"
GAPS_COLUMNS = (
    ("feed", "string"),
    ("_source_file", "string"),
    ("partition", "string"),
    ("first_missing", "string"),
    ("last_missing", "string"),
    ("missing", "bigint"),
    ("detected_at", "timestamp"),
    # why: retention | shard_expired | shard_gone (floe.streams.records; added after
    # the first release, so ensure_gaps_table adds it to an older table)
    ("reason", "string"),
)
DEFAULT_MAX_RECORDS = 100_000
DEFAULT_MAX_BYTES = 64 * 1024 * 1024
STARTING_POSITIONS = ("earliest", "latest")


def starting_position(feed: Feed) -> str | datetime:
    """``meta.floe.starting_position``: earliest (default), latest or an ISO timestamp."""
    value = feed.option("starting_position", "earliest")
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    text = str(value)
    if text in STARTING_POSITIONS:
        return text
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise FeedError(
            f"feed {feed.id}: starting_position {text!r} must be earliest, latest or an "
            "ISO timestamp (2026-01-31T00:00:00Z)"
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def batch_caps(feed: Feed) -> tuple[int, int]:
    """(max records, max bytes) of one micro-batch (``max_records`` / ``max_bytes``)."""
    caps = []
    for name, default in (("max_records", DEFAULT_MAX_RECORDS), ("max_bytes", DEFAULT_MAX_BYTES)):
        value = feed.option(name, default)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise FeedError(f"feed {feed.id}: {name} must be a positive integer, got {value!r}")
        caps.append(value)
    return caps[0], caps[1]


@dataclass(frozen=True)
class Bus:
    """What a broker kind plugs into :func:`consume`."""

    scheme: str  # kafka | kinesis (the segment key's scheme)
    name: str  # topic or stream
    # (done segment keys of this feed) -> positions argument of ``fetch``
    positions: Callable[[Iterable[str]], dict[str, Any]]
    # (positions, starting position, max records, max bytes) -> Fetched
    fetch: Callable[[dict[str, Any], str | datetime, int, int], Fetched]
    # a record's sequence text: unique per feed, ordered within a partition
    sequence: Callable[[Record], str]
    start_word: str  # first word of a starting-position marker segment
    # a data segment's <last> (Kafka: the next offset; Kinesis: the last sequence)
    last: Callable[[Sequence[Record]], str]
    # raw rows -> with the broker's coordinates as typed columns
    coordinates: Callable[[DataFrame], DataFrame]


def ensure_gaps_table(spark: SparkSession) -> None:
    from floe.runtime.session import create_table_if_missing

    ddl = ", ".join(f"{n} {t}" for n, t in GAPS_COLUMNS)
    create_table_if_missing(
        spark,
        GAPS,
        f"create table if not exists {GAPS} ({ddl}) using iceberg "
        "tblproperties ('format-version' = '2')",
    )
    if "reason" not in spark.table(GAPS).columns:
        spark.sql(f"alter table {GAPS} add columns (reason string)")


def done_segments(spark: SparkSession, feed: Feed, bus: Bus, raw_exists: bool) -> list[str]:
    """Keys of ``feed``'s segments that are done (ledger rule, docs/feeds.md)."""
    keys = []
    for key in ledger.done_files(spark, feed, raw_exists):
        parsed = parse_segment_key(key)
        if parsed is not None and parsed.scheme == bus.scheme and parsed.name == bus.name:
            keys.append(key)
    return keys


def _forget_unfinished(spark: SparkSession, feed: Feed, done: set[str]) -> int:
    """Remove ledger rows of segments a crash left unfinished; how many segments."""
    from pyspark.sql import functions as F

    from floe.runtime.statements import sql_retrying

    # One query over the three tables a batch writes before its raw rows.
    landed, *others = (
        spark.table(t).where(F.col("feed") == feed.name).select("_source_file")
        for t in (ledger.LANDED_FILES, ledger.QUARANTINE, GAPS)
    )
    keys = functools.reduce(lambda a, b: a.unionByName(b), others, landed)
    recorded = {r[0] for r in keys.distinct().collect()}
    stale = sorted(k for k in recorded if k not in done and parse_segment_key(k) is not None)
    if not stale:
        return 0
    view = f"floe_unfinished_{uuid.uuid4().hex}"
    local_frame(spark, [(k,) for k in stale], "k string").createOrReplaceTempView(view)
    try:
        for table in (ledger.QUARANTINE, ledger.LANDED_FILES, GAPS):
            sql_retrying(
                spark,
                f"delete from {table} where feed = :feed "
                f"and _source_file in (select k from {view})",
                args={"feed": feed.name},
            )
    finally:
        spark.catalog.dropTempView(view)
    return len(stale)


def _envelope(record: Record, sequence: str) -> str:
    """The decode's envelope of a broker record (the landed-stream line shape)."""
    return json.dumps(
        {
            "sequenceNumber": sequence,
            "partitionKey": record.key,
            "approximateArrivalTimestamp": arrival_text(record.timestamp_ms),
            "data": base64.b64encode(record.value).decode(),
        },
        separators=(",", ":"),
    )


def _segment(feed: Feed, key: str, records_in: int, size: int, now_ns: int) -> LandedFile:
    return LandedFile(Path(key), key, size, now_ns, {"records": records_in})


def consume(
    spark: SparkSession,
    feed: Feed,
    bus: Bus,
    *,
    raw_exists: bool,
    settings: Settings,
    project_dir: Path,
    max_records: int | None = None,
    max_bytes: int | None = None,
) -> IngestResult:
    """One micro-batch of ``feed``: new rows to append; ledger, quarantine, gaps written.

    The caller appends the rows to ``raw.<feed>`` (dbt, or :mod:`floe.streaming.bus`)
    and reconciles; until then the batch's segments are not done.
    """
    from floe.feeds.kinds import stream
    from floe.feeds.kinds.base import IngestResult, context, with_load_seq

    ledger.ensure_tables(spark)
    ensure_gaps_table(spark)
    done = done_segments(spark, feed, bus, raw_exists)
    _forget_unfinished(spark, feed, set(done))
    cap_records, cap_bytes = batch_caps(feed)
    fetched = bus.fetch(
        bus.positions(done),
        starting_position(feed),
        max_records or cap_records,
        max_bytes or cap_bytes,
    )
    ctx = context(settings, project_dir)
    if not (fetched.records or fetched.gaps or fetched.starts or fetched.ends):
        rows = stream.empty(spark, feed, ctx)
        return IngestResult(with_provenance(ledger.with_load_seq(rows, None), bus).limit(0))
    ctx = with_load_seq(spark, ctx)
    now_ns = int(datetime.now(UTC).timestamp() * 1e9)
    segments: list[LandedFile] = []
    lines: list[tuple[str, str, int, int, int, int]] = []
    moment = datetime.fromisoformat(ctx.ingested_at).replace(tzinfo=UTC)
    folder = (moment.year, moment.month, moment.day, moment.hour)
    for partition, records in sorted(fetched.records.items()):
        key = segment_key(bus.scheme, bus.name, partition, records[0].position, bus.last(records))
        segments.append(
            _segment(feed, key, len(records), sum(len(r.value) for r in records), now_ns)
        )
        lines.extend((_envelope(r, bus.sequence(r)), key, *folder) for r in records)
    markers = [
        segment_key(bus.scheme, bus.name, p, bus.start_word, s) for p, s in fetched.starts.items()
    ]
    markers += [segment_key(bus.scheme, bus.name, p, "end", s) for p, s in fetched.ends.items()]
    markers += [_gap_key(bus, g) for g in fetched.gaps]
    segments += [_segment(feed, key, 0, 0, now_ns) for key in markers]
    counts: dict[str, ledger.FileCounts] = {k: ledger.FileCounts(0, 0, 0) for k in markers}
    if lines:
        frame = spark.createDataFrame(
            lines,
            "_line string, _source_file string, ingest_year int, ingest_month int, "
            "ingest_day int, ingest_hour int",
        )
        # Positions hand each record to one segment, appended once: no redelivery
        # check (the file kinds' join against the raw table) is needed.
        batch = stream.decode(spark, feed, frame, ctx, redeliveries=False)
        counts.update(batch.counts)
        quarantine = batch.quarantine
        rows = batch.rows
    else:
        quarantine = None
        rows = stream.empty(spark, feed, ctx)
    if fetched.gaps:
        _record_gaps(spark, feed, bus, fetched.gaps, ctx.ingested_at)
    ledger.record(spark, feed, segments, counts, quarantine, ctx.ingested_at, ctx.load_seq)
    rows = with_provenance(ledger.with_load_seq(rows, ctx.load_seq), bus)
    return IngestResult(rows, [s.key for s in segments], counts)


def _gap_key(bus: Bus, gap: Gap) -> str:
    """``gap-<next position>``; for a shard lost whole, ``end-<position held>`` (the
    shard is finished: the gap is recorded once, docs/streams.md)."""
    if gap.ends_partition:
        held = str(max(int(gap.first) - 1, 0))
        return segment_key(bus.scheme, bus.name, gap.partition, "end", held)
    assert gap.last is not None, "a gap that does not end its partition has a last position"
    return segment_key(bus.scheme, bus.name, gap.partition, "gap", str(int(gap.last) + 1))


def _record_gaps(
    spark: SparkSession, feed: Feed, bus: Bus, gaps: Sequence[Gap], ingested_at: str
) -> None:
    from pyspark.sql import functions as F

    rows = [
        (
            feed.name,
            _gap_key(bus, g),
            g.partition,
            g.first,
            g.last,
            g.missing,
            ingested_at,
            g.reason,
        )
        for g in gaps
    ]
    local_frame(
        spark,
        rows,
        "feed string, _source_file string, partition string, first_missing string, "
        "last_missing string, missing bigint, detected_at string, reason string",
    ).select(
        *[F.col(c).cast(t) for c, t in GAPS_COLUMNS],
    ).writeTo(GAPS).append()


def with_provenance(rows: DataFrame, bus: Bus) -> DataFrame:
    """Raw rows with the broker's coordinates as typed columns (from the segment key
    and the record's sequence): ``_topic, _topic_partition, _offset`` or ``_stream, _shard``."""
    return bus.coordinates(rows)


@dataclass(frozen=True)
class GapSummary:
    """``raw.stream_gaps`` of one feed: its gaps, the records known to be missing (Kafka
    counts them), and the gaps whose count is unknown (Kinesis sequence numbers have
    holes, so its rows carry a range and ``missing`` NULL)."""

    gaps: int
    missing: int
    uncounted: int


def gap_count(spark: SparkSession, feed: Feed) -> GapSummary:
    """What of ``feed`` expired or was lost before floe read it (``raw.stream_gaps``)."""
    from pyspark.sql import functions as F

    ensure_gaps_table(spark)
    row = (
        spark.table(GAPS)
        .where(F.col("feed") == feed.name)
        .agg(F.count("*"), F.sum("missing"), F.count_if(F.col("missing").isNull()))
        .collect()[0]
    )
    return GapSummary(int(row[0]), int(row[1] or 0), int(row[2]))
