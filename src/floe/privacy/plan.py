"""What an erasure or rectification would change, found before anything changes.

For a subject ``key=value`` (floe.privacy.subject) the plan lists:

* every Iceberg table of floe's schemas with a column tagged with that subject key
  (raw, staging, intermediate, marts, snapshots, dq — every layer that stores
  rows), with the rows holding the subject now and, for raw tables, the landed
  files those rows came from. A masked twin's key column is searched for the masked
  value. A table whose *older* snapshots (or merge-on-read deleted rows) may still
  hold the subject — a data file outside the current snapshot whose column bounds
  include the value — is listed for snapshot hygiene even with no live row;
* ``raw.quarantine``: the subject's quarantined records of stream feeds, found by
  decoding them in the executors (floe.privacy.matcher), as row fingerprints;
* the landed files holding the subject (floe.privacy.landing);
* views that read those tables (they store nothing), and tables with an untagged
  column named like a subject column (a warning: tag the column, or pass
  ``include_untagged``).

Every value is typed against its column first (a bad value fails here, naming the
column) and reaches Spark only as a bound parameter or a DataFrame literal.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from floe.privacy.subject import Subject, SubjectError, typed_value
from floe.privacy.tags import ColumnTag, PrivacyTags

if TYPE_CHECKING:
    from pyspark.sql import Column, SparkSession

    from floe.feeds.declarations import Feed
    from floe.privacy.landing import LandedHit
    from floe.privacy.secrets import Secrets
    from floe.runtime import Settings

QUARANTINE = "raw.quarantine"
LANDED_FILES = "raw.landed_files"
# One quarantined record's identity: every column that tells two records apart, as
# JSON (unambiguous, unlike a concatenation). The same SQL finds and deletes them.
QUARANTINE_FINGERPRINT = (
    "sha2(to_json(struct(feed, _source_file, _sequence_number, raw_data, "
    "base64(raw_bytes) as raw_bytes, error_code)), 256)"
)
_TABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*$")

Progress = Callable[[str], None]


def quote_table(table: str) -> str:
    if not _TABLE.match(table):
        raise ValueError(f"table {table!r} is not schema.table (letters, digits, underscores)")
    schema, name = table.split(".")
    return f"`{schema}`.`{name}`"


def quote_path(path: str) -> str:
    """A column or struct field path as SQL (`a`.`b`), backticks doubled."""
    return ".".join("`" + part.replace("`", "``") + "`" for part in path.split("."))


def field_type(schema: Any, path: str) -> str | None:
    """Spark SQL type of the field at ``path`` of a StructType (case-insensitive)."""
    from pyspark.sql.types import StructType

    current: Any = schema
    for part in path.split("."):
        if not isinstance(current, StructType):
            return None
        match = next((f for f in current.fields if f.name.lower() == part.lower()), None)
        if match is None:
            return None
        current = match.dataType
    return str(current.simpleString())


@dataclass
class TableTarget:
    """One table to change: its subject columns, the parameters and rows found."""

    table: str
    columns: list[ColumnTag]
    params: dict[str, Any]
    rows: int = 0
    history: bool = False
    feed: Feed | None = None
    files: dict[str, int] = field(default_factory=dict)  # landed file key -> rows
    snapshot_before: int | None = None
    by_name: bool = False  # matched by column name, not by a tag
    set_columns: dict[str, str] = field(default_factory=dict)  # rectify: column -> param
    set_params: dict[str, Any] = field(default_factory=dict)
    tags: dict[str, ColumnTag] = field(default_factory=dict)  # the table's tags, lower name

    @property
    def predicate(self) -> str:
        return " or ".join(f"{quote_path(c.path)} = :p{i}" for i, c in enumerate(self.columns))

    def condition(self) -> Column:
        """The same predicate as a DataFrame condition (literals, no SQL text)."""
        from pyspark.sql import functions as F

        cond = None
        for i, c in enumerate(self.columns):
            term = F.col(quote_path(c.path)) == F.lit(self.params[f"p{i}"])
            cond = term if cond is None else (cond | term)
        assert cond is not None
        return cond

    def differs(self) -> Column:
        """Rectify: a row still needs a change (a set column differs from its value)."""
        from pyspark.sql import functions as F

        cond = None
        for column, param in self.set_columns.items():
            term = ~F.col(quote_path(column)).eqNullSafe(F.lit(self.set_params[param]))
            cond = term if cond is None else (cond | term)
        assert cond is not None
        return cond

    def touched(self) -> bool:
        return self.rows > 0 or self.history


@dataclass
class QuarantineTarget:
    """The subject's quarantined records: fingerprints and (feed, file) counts."""

    fingerprints: list[str] = field(default_factory=list)
    files: dict[tuple[str, str], int] = field(default_factory=dict)
    feeds: list[str] = field(default_factory=list)
    snapshot_before: int | None = None

    @property
    def rows(self) -> int:
        return len(self.fingerprints)


@dataclass
class Plan:
    """Everything one run would change (see the module docstring)."""

    operation: str
    subject: Subject
    tables: list[TableTarget] = field(default_factory=list)
    quarantine: QuarantineTarget | None = None
    landed: list[LandedHit] = field(default_factory=list)
    ingested_files: dict[tuple[str, str], int] = field(default_factory=dict)
    landing_scanned: bool = False
    views: list[str] = field(default_factory=list)
    untagged: list[str] = field(default_factory=list)
    stream_feeds: list[str] = field(default_factory=list)
    # feeds with a column holding the subject: name -> (feed, its subject columns)
    subject_feeds: dict[str, tuple[Feed, list[ColumnTag]]] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not any(t.touched() for t in self.tables) and not (
            self.quarantine and self.quarantine.rows
        )

    def touched_tables(self) -> list[TableTarget]:
        return [t for t in self.tables if t.touched()]


# --------------------------------------------------------------------------- catalog


def _views_in(spark: SparkSession, schemas: Sequence[str]) -> list[str]:
    existing = {r[0] for r in spark.sql("show namespaces").collect()}
    found = []
    for schema in schemas:
        if schema in existing:
            found += [
                f"{schema}.{r.viewName}" for r in spark.sql(f"show views in {schema}").collect()
            ]
    return sorted(found)


def current_snapshot(spark: SparkSession, table: str) -> int | None:
    row = spark.sql(
        f"select snapshot_id from {quote_table(table)}.snapshots order by committed_at desc limit 1"
    ).first()
    return int(row[0]) if row else None


def _may_hold_in_history(spark: SparkSession, target: TableTarget) -> bool:
    """A data file outside the live rows may hold the subject: one that only older
    snapshots reference, or (with delete files) a current one, whose column bounds
    include the value (files without bounds count as possibly holding it)."""
    from pyspark.sql import functions as F

    qt = quote_table(target.table)
    snapshots = spark.sql(f"select count(*) from {qt}.snapshots").first()[0]  # type: ignore[index]
    deletes = spark.sql(f"select count(*) from {qt}.delete_files").first()[0]  # type: ignore[index]
    if snapshots <= 1 and deletes == 0:
        return False
    files = spark.table(f"{qt}.all_data_files")
    if deletes == 0:
        current = spark.table(f"{qt}.data_files").select("file_path")
        files = files.join(current, "file_path", "left_anti")
    cond = None
    for i, column in enumerate(target.columns):
        metrics = F.col("readable_metrics").getField(column.path)
        value = F.lit(target.params[f"p{i}"])
        term = F.coalesce(metrics.getField("lower_bound") <= value, F.lit(True)) & F.coalesce(
            metrics.getField("upper_bound") >= value, F.lit(True)
        )
        cond = term if cond is None else (cond | term)
    assert cond is not None
    try:
        return bool(files.where(cond).limit(1).count())
    except Exception:
        return True


# --------------------------------------------------------------------------- plan


def build_plan(
    spark: SparkSession,
    settings: Settings,
    tags: PrivacyTags,
    subject: Subject,
    secrets: Secrets,
    *,
    operation: str = "forget",
    sets: Mapping[str, str] | None = None,
    include_untagged: bool = False,
    scan_landing: bool = True,
    progress: Progress | None = None,
) -> Plan:
    """The plan for ``subject`` (``sets``: rectification's column -> new value)."""
    from floe.privacy.log import LOG_TABLE
    from floe.runtime.session import SCHEMAS
    from floe.runtime.tables import tables_in

    say = progress or (lambda _m: None)
    keys = tags.subject_keys()
    if subject.key not in keys:
        raise SubjectError(
            f"--subject {subject.key}: no column is tagged with subject_key {subject.key!r}; "
            f"tagged keys: {', '.join(keys) or 'none (tag columns with meta.subject_key)'}"
        )
    plan = Plan(operation, subject)
    names = tags.subject_column_names(subject.key)
    plan.views = [
        v
        for v in _views_in(spark, SCHEMAS)
        if (rel := tags.get(v)) and rel.subject_columns(subject.key)
    ]
    for table in tables_in(spark, SCHEMAS):
        if table in (LOG_TABLE, QUARANTINE):
            continue
        target = _table_target(spark, tags, subject, secrets, table, names, include_untagged, plan)
        if target is None:
            continue
        if sets is not None:
            _add_sets(spark, target, sets, secrets)
            if not target.set_columns:
                continue
        say(f"plan: counting {table}")
        frame = spark.table(quote_table(table)).where(target.condition())
        if sets is not None:
            frame = frame.where(target.differs())
        target.rows = frame.count()
        if target.rows and (target.feed is not None or _has_column(spark, table, "_source_file")):
            target.files = {
                str(r[0]): int(r[1])
                for r in frame.groupBy("_source_file").count().collect()
                if r[0] is not None
            }
        # rectify changes values, not subjects: its own changes are all it cleans up
        target.history = sets is None and not target.rows and _may_hold_in_history(spark, target)
        target.snapshot_before = current_snapshot(spark, table)
        plan.tables.append(target)
    if sets is None:
        _plan_quarantine(spark, settings, tags, subject, plan, say)
        _plan_landing(spark, settings, tags, subject, plan, scan_landing, say)
    return plan


def _has_column(spark: SparkSession, table: str, column: str) -> bool:
    return column in spark.table(quote_table(table)).columns


def _table_target(
    spark: SparkSession,
    tags: PrivacyTags,
    subject: Subject,
    secrets: Secrets,
    table: str,
    names: set[str],
    include_untagged: bool,
    plan: Plan,
) -> TableTarget | None:
    rel = tags.get(table)
    columns = rel.subject_columns(subject.key) if rel else []
    schema = spark.table(quote_table(table)).schema
    by_name = False
    if not columns:
        matches = [f.name for f in schema.fields if f.name.lower() in names]
        if not matches:
            return None
        if not include_untagged:
            plan.untagged += [f"{table}.{m}" for m in matches]
            return None
        by_name = True
        columns = [
            ColumnTag(m, subject_key=subject.key, where=f"{table}.{m} (by name)") for m in matches
        ]
    params: dict[str, Any] = {}
    kept: list[ColumnTag] = []
    for column in columns:
        spark_type = field_type(schema, column.path)
        if spark_type is None:
            continue  # tagged in YAML but not (yet) in the table
        where = f"{table}.{column.path}"
        if column.stored is not None:
            params[f"p{len(kept)}"] = column.stored.apply(subject.value, secrets)
        else:
            params[f"p{len(kept)}"] = subject.typed(spark_type, where)
        kept.append(column)
    if not kept:
        return None
    return TableTarget(
        table,
        kept,
        params,
        feed=rel.feed if rel else None,
        by_name=by_name,
        tags=dict(rel.columns) if rel else {},
    )


def _add_sets(
    spark: SparkSession, target: TableTarget, sets: Mapping[str, str], secrets: Secrets
) -> None:
    schema = spark.table(quote_table(target.table)).schema
    key_columns = {c.column.lower() for c in target.columns}
    for i, (column, value) in enumerate(sorted(sets.items())):
        spark_type = field_type(schema, column)
        if spark_type is None or column.lower() in key_columns:
            continue
        name = next(f.name for f in schema.fields if f.name.lower() == column.lower())
        param = f"s{i}"
        tag = target.tags.get(name.lower())
        stored = tag.stored if tag is not None else None
        if stored is not None:
            target.set_params[param] = stored.apply(value, secrets)
        else:
            target.set_params[param] = typed_value(
                value, spark_type, f"--set {target.table}.{name}"
            )
        target.set_columns[name] = param


# --------------------------------------------------------------------------- quarantine


def _stream_feeds(tags: PrivacyTags, key: str) -> list[tuple[Feed, list[ColumnTag]]]:
    out = []
    for rel in tags.relations.values():
        if rel.feed is not None and rel.feed.kind == "stream" and rel.subject_columns(key):
            out.append((rel.feed, rel.subject_columns(key)))
    return sorted(out, key=lambda x: x[0].name)


def _plan_quarantine(
    spark: SparkSession,
    settings: Settings,
    tags: PrivacyTags,
    subject: Subject,
    plan: Plan,
    say: Progress,
) -> None:
    from pyspark.sql import functions as F

    feeds = _stream_feeds(tags, subject.key)
    plan.stream_feeds = [f.name for f, _ in feeds]
    if not feeds or not spark.catalog.tableExists(QUARANTINE):
        return
    say(f"plan: decoding quarantined records of {', '.join(plan.stream_feeds)}")
    specs = {feed.name: matcher_spec(feed, cols, settings) for feed, cols in feeds}
    value = subject.value
    rows = (
        spark.table(QUARANTINE)
        .where(F.col("feed").isin(list(specs)))
        .select(
            F.expr(QUARANTINE_FINGERPRINT).alias("fp"),
            "feed",
            "_source_file",
            "raw_data",
            "raw_bytes",
        )
    )

    def match(batches: Iterator[Any]) -> Iterator[Any]:
        import pandas as pd  # type: ignore[import-untyped]

        from floe.privacy.matcher import RecordMatcher

        matchers = {
            name: RecordMatcher(fmt, paths, value, definitions)
            for name, (fmt, paths, definitions) in specs.items()
        }
        for batch in batches:
            keep = [
                matchers[f].matches_quarantined(d, b)
                for f, d, b in zip(
                    batch["feed"], batch["raw_data"], batch["raw_bytes"], strict=True
                )
            ]
            yield pd.DataFrame(batch[keep][["fp", "feed", "_source_file"]])

    found = rows.mapInPandas(
        match,  # type: ignore[arg-type]
        "fp string, feed string, _source_file string",
    ).collect()
    target = QuarantineTarget(feeds=plan.stream_feeds)
    target.fingerprints = sorted({r.fp for r in found})
    for r in found:
        k = (r.feed, r._source_file)
        target.files[k] = target.files.get(k, 0) + 1
    target.snapshot_before = current_snapshot(spark, QUARANTINE)
    plan.quarantine = target


def matcher_spec(
    feed: Feed, columns: Sequence[ColumnTag], settings: Settings
) -> tuple[str, list[tuple[str, ...]], list[Any]]:
    """(data format, field paths, Avro definitions) of a stream feed: picklable."""
    from floe.feeds.kinds.stream import spec
    from floe.registry.layout import load_sources

    s = spec(feed)
    for source in load_sources(settings.schemas_dir):
        if source.name == s.schema and source.registry == s.registry:
            definitions = list(source.definitions) if source.data_format == "AVRO" else []
            return source.data_format, [c.parts for c in columns], definitions
    raise SubjectError(
        f"feed {feed.id}: its schema {s.registry}/{s.schema} is not under {settings.schemas_dir}"
    )


# --------------------------------------------------------------------------- landing


def _plan_landing(
    spark: SparkSession,
    settings: Settings,
    tags: PrivacyTags,
    subject: Subject,
    plan: Plan,
    scan: bool,
    say: Progress,
) -> None:
    """Landed files of the subject: every file of every feed with a subject column is
    scanned (``scan``), else only the files the raw rows and quarantine name."""
    from pyspark.sql import functions as F

    from floe.feeds.kinds import feed_kind
    from floe.privacy.landing import LandedHit, scan_file, sha256_of
    from floe.privacy.matcher import RecordMatcher

    for target in plan.tables:
        if target.feed is not None:
            for key, n in target.files.items():
                plan.ingested_files[(target.feed.name, key)] = n
    if plan.quarantine:
        for (feed_name, key), n in plan.quarantine.files.items():
            k = (feed_name, key)
            plan.ingested_files[k] = plan.ingested_files.get(k, 0) + n
    feeds = [
        (rel.feed, rel.subject_columns(subject.key))
        for rel in tags.relations.values()
        if rel.feed is not None and rel.subject_columns(subject.key)
    ]
    plan.subject_feeds = {feed.name: (feed, columns) for feed, columns in feeds}
    known = {k for k, _ in plan.ingested_files}
    ledger: set[tuple[str, str]] = set()
    if spark.catalog.tableExists(LANDED_FILES):
        names = [f.name for f, _ in feeds]
        ledger = {
            (r[0], r[1])
            for r in spark.table(LANDED_FILES)
            .where(F.col("feed").isin(names))
            .select("feed", "_source_file")
            .collect()
        }
    plan.landing_scanned = scan
    for feed, columns in sorted(feeds, key=lambda x: x[0].name):
        top = [c.column for c in columns]
        matcher = None
        if feed.kind == "stream":
            fmt, paths, definitions = matcher_spec(feed, columns, settings)
            matcher = RecordMatcher(fmt, paths, subject.value, definitions)
        files = feed_kind(feed.kind).discover(feed, settings.landing)
        if not scan:
            files = [f for f in files if (feed.name, f.key) in known]
        say(f"plan: scanning {len(files)} landed file(s) of {feed.id}")
        for landed in files:
            n = scan_file(feed, landed.path, top, subject.value, matcher)
            if n:
                plan.landed.append(
                    LandedHit(feed.name, landed.key, landed.path, n, sha256_of(landed.path))
                )
    plan.landed.sort(key=lambda h: (h.feed, h.key))
    # files the ledger knows, as ingested (whether or not they still hold the subject)
    plan.ingested_files = {k: v for k, v in plan.ingested_files.items() if k in ledger}
