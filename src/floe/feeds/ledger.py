"""The ingestion ledger: which landed files are done, per feed — one reader, one writer.

Two side tables live beside the raw tables (docs/feeds.md):

* ``raw.landed_files`` — one row per ingested file: its size and modification time
  when it was read, records in / loaded into ``raw.<feed>`` / quarantined;
* ``raw.quarantine`` — every record that could not be loaded, with a code and detail.

Both are written for a batch of files *before* the raw rows are committed (dbt
appends them after the raw model returns). A file is done when ``raw.<feed>`` holds
rows of it, or when ``raw.landed_files`` says it loaded nothing (an all-bad or empty
file leaves no raw row). A crash between the two commits leaves the file not done:
the next run reads it again and *replaces* its quarantine and manifest rows, so
nothing is lost and nothing is counted twice.

File names reach these tables only as data (DataFrame filters and bound parameters),
never pasted into SQL text.

Every batch gets a *load sequence* (:func:`next_load_seq`), stamped on its raw rows
(``_load_seq``) and its ``raw.landed_files`` rows: allocated under the warehouse's
writer lock (floe.runtime.locking) just before the batch commits, it increases in
commit order, so downstream models select "rows newer than the last applied batch"
by it, never by ``_ingested_at``, a clock read before the work (docs/reliability.md).

Additive since the first version (older tables gain the columns on first use;
docs/feeds.md, "The ledger"): ``raw.landed_files.checksum`` (a file's content hash when it was read, see
:func:`floe.feeds.files.file_checksum`), and ``raw.landed_file_changes``, one row per
change observed in a file *after* it was ingested (floe never re-reads such a file;
it reports it once per observed state). A file whose :class:`FileCounts` carry
``skipped`` (it changed while it was read) is not recorded at all: it is not done,
and the next build reads it again.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from floe.feeds.declarations import Feed
from floe.feeds.files import LandedFile, file_checksum
from floe.runtime.frames import local_frame
from floe.runtime.jars import batch_constant
from floe.runtime.session import create_table_if_missing
from floe.runtime.statements import sql_retrying

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

log = logging.getLogger(__name__)

QUARANTINE = "raw.quarantine"
LANDED_FILES = "raw.landed_files"
LANDED_FILE_CHANGES = "raw.landed_file_changes"

QUARANTINE_COLUMNS = (
    ("feed", "string"),
    ("_source_file", "string"),
    ("_sequence_number", "string"),
    ("_partition_key", "string"),
    ("_arrival_ts", "timestamp"),
    ("raw_data", "string"),
    ("raw_bytes", "binary"),
    ("error_code", "string"),
    ("error_detail", "string"),
    ("_ingested_at", "timestamp"),
)
LANDED_FILES_COLUMNS = (
    ("feed", "string"),
    ("_source_file", "string"),
    ("bytes", "bigint"),
    ("modified_at", "timestamp"),
    ("records_in", "bigint"),
    ("loaded", "bigint"),
    ("quarantined", "bigint"),
    ("_ingested_at", "timestamp"),
    ("checksum", "string"),  # added later: NULL in rows written before it
    ("_load_seq", "bigint"),  # added later: NULL in rows written before it (docs/reliability.md)
)
LANDED_FILE_CHANGES_COLUMNS = (
    ("feed", "string"),
    ("_source_file", "string"),
    ("change", "string"),  # size | content | removed
    ("recorded_bytes", "bigint"),
    ("recorded_modified_at", "timestamp"),
    ("recorded_checksum", "string"),
    ("observed_bytes", "bigint"),
    ("observed_modified_at", "timestamp"),
    ("observed_checksum", "string"),
    ("detected_at", "timestamp"),
)


def _ddl(columns: Iterable[tuple[str, str]]) -> str:
    return ", ".join(f"{name} {typ}" for name, typ in columns)


@dataclass(frozen=True)
class FileCounts:
    """Records of one landed file: read, loaded into raw.<feed>, quarantined."""

    records_in: int
    loaded: int
    quarantined: int = 0
    # Additive (docs/feeds.md, "The ledger"): the file's checksum when it was read, and why a file that
    # was discovered is not recorded in this batch (it changed while it was read).
    checksum: str | None = None
    skipped: str | None = None


def batch_time() -> str:
    """One UTC ingest time per batch (text: Spark casts it in the session's UTC zone)."""
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")


LOAD_SEQ = "_load_seq"
_LAST_LOAD_SEQ = [0]
_LOAD_SEQ_LOCK = threading.Lock()


def next_load_seq(spark: SparkSession) -> int:
    """The load sequence of a new batch: above every batch recorded in the ledger.

    Called under the writer lock, right before the batch's ledger rows are written:
    every committed raw row has a ledger row with its sequence (the ledger is written
    first), so the next number is above all of them. Feeds ingested by parallel dbt
    threads of one process draw distinct numbers; a feed's batches run one at a time.
    """
    from pyspark.sql import functions as F

    ensure_tables(spark)
    recorded = spark.table(LANDED_FILES).agg(F.max(LOAD_SEQ)).collect()[0][0] or 0
    with _LOAD_SEQ_LOCK:
        seq = max(int(recorded), _LAST_LOAD_SEQ[0]) + 1
        _LAST_LOAD_SEQ[0] = seq
    return seq


def with_load_seq(rows: DataFrame, seq: int | None) -> DataFrame:
    """``rows`` with the batch's ``_load_seq`` column (NULL for the empty shape)."""

    return rows.withColumn(LOAD_SEQ, batch_constant(rows.sparkSession, seq))


# Catalogs (by URI) whose ledger tables this process has made sure of: every raw model
# called this four times per build, each a handful of catalog round trips.
_ENSURED: set[str] = set()


def ensure_tables(spark: SparkSession) -> None:
    # Raw models run in parallel (dbt threads): create_table_if_missing survives the race.
    catalog = spark.conf.get("spark.sql.defaultCatalog", "")
    uri = spark.conf.get(f"spark.sql.catalog.{catalog}.uri", "") if catalog else ""
    if uri and uri in _ENSURED:
        return
    create_table_if_missing(
        spark,
        QUARANTINE,
        f"create table if not exists {QUARANTINE} ({_ddl(QUARANTINE_COLUMNS)}) "
        "using iceberg partitioned by (feed) tblproperties ('format-version' = '2')",
    )
    create_table_if_missing(
        spark,
        LANDED_FILES,
        f"create table if not exists {LANDED_FILES} ({_ddl(LANDED_FILES_COLUMNS)}) "
        "using iceberg tblproperties ('format-version' = '2')",
    )
    # Tables created before a column was added gain it (Iceberg: metadata only).
    have = {f.name for f in spark.table(LANDED_FILES).schema.fields}
    for name, typ in LANDED_FILES_COLUMNS:
        if name not in have:
            spark.sql(f"alter table {LANDED_FILES} add column {name} {typ}")
    create_table_if_missing(
        spark,
        LANDED_FILE_CHANGES,
        f"create table if not exists {LANDED_FILE_CHANGES} "
        f"({_ddl(LANDED_FILE_CHANGES_COLUMNS)}) "
        "using iceberg tblproperties ('format-version' = '2')",
    )
    if uri:
        _ENSURED.add(uri)


def done_files(spark: SparkSession, feed: Feed, raw_exists: bool) -> set[str]:
    """Keys of ``feed``'s files that are done (see the module docstring)."""
    from pyspark.sql import functions as F

    ensure_tables(spark)
    nothing_loaded = (
        spark.table(LANDED_FILES)
        .where((F.col("feed") == feed.name) & (F.col("loaded") == 0))
        .select("_source_file")
    )
    done = {row[0] for row in nothing_loaded.collect()}
    if raw_exists:
        in_raw = spark.table(feed.raw_table).select("_source_file").distinct()
        done |= {row[0] for row in in_raw.collect()}
    return done


def record(
    spark: SparkSession,
    feed: Feed,
    files: Sequence[LandedFile],
    counts: Mapping[str, FileCounts],
    quarantine: DataFrame | None,
    ingested_at: str,
    load_seq: int | None = None,
) -> None:
    """Replace the quarantine and manifest rows of ``files`` (before the raw commit)."""
    from pyspark.sql import functions as F

    ensure_tables(spark)
    skipped = {k: c.skipped for k, c in counts.items() if c.skipped}
    for key, why in sorted(skipped.items()):
        log.warning("feed %s: %s not recorded, read again next build: %s", feed.name, key, why)
    files = [f for f in files if f.key not in skipped]
    if not files:
        return
    keys = [f.key for f in files]
    # Only a replay after a crash finds rows to replace; a first pass commits no delete.
    view = f"floe_replaced_files_{uuid.uuid4().hex}"
    mine = (F.col("feed") == feed.name) & F.col("_source_file").isin(keys)
    probes = [
        spark.table(t).where(mine).select(F.lit(t).alias("t")).limit(1)
        for t in (QUARANTINE, LANDED_FILES)
    ]
    holding = {r[0] for r in probes[0].unionByName(probes[1]).collect()}  # one Spark job
    for table in (QUARANTINE, LANDED_FILES):
        if table in holding:
            local_frame(spark, [(k,) for k in keys], "k string").createOrReplaceTempView(view)
            try:
                # Other feeds' models append to these tables meanwhile (dbt threads).
                sql_retrying(
                    spark,
                    f"delete from {table} where feed = :feed "
                    f"and _source_file in (select k from {view})",
                    args={"feed": feed.name},
                )
            finally:
                spark.catalog.dropTempView(view)
    if quarantine is not None and any(c.quarantined for c in counts.values()):
        quarantine.writeTo(QUARANTINE).append()
    rows = []
    for f in files:
        c = counts.get(f.key, FileCounts(0, 0, 0))
        modified = mtime_stamp(f.mtime_ns)
        rows.append(
            (
                feed.name,
                f.key,
                f.size,
                modified,
                c.records_in,
                c.loaded,
                c.quarantined,
                ingested_at,
                c.checksum,
                load_seq,
            )
        )
    manifest = local_frame(
        spark,
        rows,
        "feed string, _source_file string, bytes bigint, modified_at string, records_in bigint, "
        "loaded bigint, quarantined bigint, _ingested_at string, checksum string, "
        "_load_seq bigint",
    ).select(
        "feed",
        "_source_file",
        "bytes",
        F.col("modified_at").cast("timestamp").alias("modified_at"),
        "records_in",
        "loaded",
        "quarantined",
        F.col("_ingested_at").cast("timestamp").alias("_ingested_at"),
        "checksum",
        LOAD_SEQ,
    )
    manifest.writeTo(LANDED_FILES).append()


def mtime_stamp(ns: int) -> str:
    """A modification time in ns as timestamp text, exact to the microsecond (no float)."""
    seconds, micros = divmod(ns // 1000, 1_000_000)
    moment = datetime.fromtimestamp(seconds, UTC) + timedelta(microseconds=micros)
    return moment.strftime("%Y-%m-%d %H:%M:%S.%f")


def report_changes(
    spark: SparkSession, feed: Feed, files: Sequence[LandedFile]
) -> list[tuple[str, str]]:
    """Report ``feed``'s already-ingested files whose content changed since they were read.

    ``files`` are the discovered files the ledger says are done. A file whose size
    differs from the recorded one changed; one with the same size and another
    modification time is checksummed and changed only if the content differs (a
    ``touch`` is no change). Each change is logged as a warning and written once per
    observed state to ``raw.landed_file_changes``; the file is never read again.
    Returns ``(key, change)`` of the changes found (reported before or now).
    """
    from pyspark.sql import functions as F

    if not files:
        return []  # nothing done yet (a first build): no ledger read, no Spark job
    ensure_tables(spark)
    recorded = {
        r["_source_file"]: r
        for r in spark.table(LANDED_FILES)
        .where(F.col("feed") == feed.name)
        .select(
            "_source_file",
            "bytes",
            "modified_at",
            F.unix_micros("modified_at").alias("modified_us"),
            "checksum",
        )
        .collect()
    }
    found: list[tuple[str, str, Any, LandedFile]] = []
    for f in files:
        row = recorded.get(f.key)
        if row is None or row["bytes"] is None:
            continue
        if row["bytes"] != f.size:
            found.append((f.key, "size", None, f))
        elif row["modified_us"] != f.mtime_ns // 1000:
            observed = file_checksum(f.path)
            if row["checksum"] is not None and observed != row["checksum"]:
                found.append((f.key, "content", observed, f))
    if not found:
        return []
    seen = {
        (r[0], r[1], r[2])
        for r in spark.table(LANDED_FILE_CHANGES)
        .where(F.col("feed") == feed.name)
        .select("_source_file", "observed_bytes", F.unix_micros("observed_modified_at"))
        .collect()
    }
    rows = []
    for key, change, observed, f in found:
        row = recorded[key]
        log.warning(
            "feed %s: landed file %s changed after it was ingested (%s): it is not read again; "
            "land corrected data as a new file",
            feed.name,
            key,
            change,
        )
        if (key, f.size, f.mtime_ns // 1000) in seen:
            continue
        rows.append(
            (
                feed.name,
                key,
                change,
                row["bytes"],
                row["modified_at"],
                row["checksum"],
                f.size,
                mtime_stamp(f.mtime_ns),
                observed,
                batch_time(),
            )
        )
    if rows:
        local_frame(
            spark,
            rows,
            "feed string, _source_file string, change string, recorded_bytes bigint, "
            "recorded_modified_at timestamp, recorded_checksum string, observed_bytes bigint, "
            "observed_modified_at string, observed_checksum string, detected_at string",
        ).select(
            "feed",
            "_source_file",
            "change",
            "recorded_bytes",
            "recorded_modified_at",
            "recorded_checksum",
            "observed_bytes",
            F.col("observed_modified_at").cast("timestamp").alias("observed_modified_at"),
            "observed_checksum",
            F.col("detected_at").cast("timestamp").alias("detected_at"),
        ).writeTo(LANDED_FILE_CHANGES).append()
    return [(key, change) for key, change, _, _ in found]


@dataclass(frozen=True)
class Imbalance:
    """A landed file whose records do not add up: in != loaded + quarantined."""

    source_file: str
    records_in: int | None
    loaded: int
    quarantined: int

    def __str__(self) -> str:
        read = "not in raw.landed_files" if self.records_in is None else f"{self.records_in} in"
        return f"{self.source_file}: {read}, {self.loaded} in the raw table, {self.quarantined} quarantined"


def reconcile(spark: SparkSession, feed: Feed) -> list[Imbalance]:
    """Files of ``feed`` whose records do not add up, counted from the tables themselves.

    Records in (the manifest) must equal the rows of the file in ``raw.<feed>`` plus its
    rows in ``raw.quarantine``; a file with raw rows but no manifest row is wrong too.
    """
    from pyspark.sql import functions as F

    # One aggregation over the three tables stacked, not three aggregations joined.
    mine = F.col("feed") == feed.name
    no = F.lit(None).cast("bigint")
    stacked = (
        spark.table(LANDED_FILES)
        .where(mine)
        .select(
            "_source_file",
            "records_in",
            F.lit(1).alias("m"),
            F.lit(0).alias("r"),
            F.lit(0).alias("q"),
        )
        .unionByName(
            spark.table(feed.raw_table).select(
                "_source_file",
                no.alias("records_in"),
                F.lit(0).alias("m"),
                F.lit(1).alias("r"),
                F.lit(0).alias("q"),
            )
        )
        .unionByName(
            spark.table(QUARANTINE)
            .where(mine)
            .select(
                "_source_file",
                no.alias("records_in"),
                F.lit(0).alias("m"),
                F.lit(0).alias("r"),
                F.lit(1).alias("q"),
            )
        )
    )
    joined = (
        stacked.groupBy("_source_file")
        .agg(
            F.sum("records_in").alias("records_in"),
            F.sum("m").alias("manifest_rows"),
            F.sum("r").alias("n_raw"),
            F.sum("q").alias("n_bad"),
        )
        .where(
            F.col("records_in").isNull()
            | (F.col("manifest_rows") > 1)
            | (F.col("records_in") != F.col("n_raw") + F.col("n_bad"))
        )
    )
    return [
        Imbalance(r["_source_file"], r["records_in"], r["n_raw"], r["n_bad"])
        for r in joined.orderBy("_source_file").collect()
    ]
