"""GDPR erasure (``floe forget``) and rectification (``floe rectify``): docs/privacy.md.

One run, in order — each step safe to repeat, so a run killed at any point and
started again finishes the same erasure (``audit.erasure_log`` keeps one row):

1. **plan** (floe.privacy.plan): every table, quarantined record and landed file
   holding the subject; nothing is written on a dry run;
2. **journal** the plan as a ``planned`` log row (tables with their snapshot id
   before, files with their checksum) — or resume the unfinished row of an earlier
   run of the same operation on the same subject;
3. **change** each table in one transaction (``DELETE`` / ``UPDATE`` with bound
   parameters); a table whose snapshot moved past the journaled one while no row
   is left was changed by the interrupted run: its snapshot is looked up. Then the
   row says ``erased``;
4. **landing** (``--include-landing``): landed files rewritten without the subject,
   and the ingestion ledger (``raw.landed_files``) recomputed for every touched
   file from the tables, so reconciliation and exactly-once ingestion still hold;
5. **hygiene** of every changed table: merge-on-read files holding deleted rows
   rewritten, manifests rewritten (a manifest keeps a removed file's column bounds),
   every snapshot but the current expired, orphan files written before this step
   removed — so no data or metadata file keeps the subject. The decode staging of
   the subject's streams is removed too;
6. **verify** no table still holds the subject, and mark the row ``complete``.

Nothing else may write the lakehouse meanwhile (orphan removal cannot tell a
concurrent writer's uncommitted file from garbage); two erasures exclude each other
through a lock file under ``$FLOE_HOME/state/privacy``.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import re
import shutil
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from floe.privacy.log import ErasureLog, FileEntry, LogRow, MaintenanceEntry, TableEntry, utc_now
from floe.privacy.plan import (
    LANDED_FILES,
    QUARANTINE,
    QUARANTINE_FINGERPRINT,
    Plan,
    TableTarget,
    build_plan,
    quote_path,
    quote_table,
)
from floe.privacy.subject import Subject, SubjectError, check_text
from floe.runtime.frames import local_frame

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from floe.privacy.secrets import Secrets
    from floe.privacy.tags import PrivacyTags
    from floe.runtime import Settings

Progress = Callable[[str], None]


class ErasureError(RuntimeError):
    """An erasure or rectification could not finish; re-running it resumes it."""


@dataclass
class Outcome:
    """What a run did (or, dry, would do)."""

    operation: str
    status: str  # dry-run | nothing | noop | complete
    plan: Plan
    row: LogRow | None = None
    messages: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        plan = self.plan
        return {
            "operation": self.operation,
            "status": self.status,
            "subject_key": plan.subject.key,
            "erasure_id": self.row.erasure_id if self.row else None,
            "tables": [
                {
                    "table": t.table,
                    "rows": t.rows,
                    "history_only": not t.rows and t.history,
                    "columns": [c.path for c in t.columns],
                    "by_name": t.by_name,
                    "via_lineage": sorted({c.via for c in t.columns if c.via}),
                }
                for t in plan.touched_tables()
            ],
            "quarantine": plan.quarantine.rows if plan.quarantine else 0,
            "landed_files": [
                {"feed": h.feed, "path": h.key, "records": h.records} for h in plan.landed
            ],
            "views": plan.views,
            "untagged": plan.untagged,
            "log": _row_dict(self.row) if self.row else None,
            "messages": self.messages,
        }

    def render(self) -> str:
        plan, lines = self.plan, []
        verb = {"forget": "erase", "rectify": "rectify"}[self.operation]
        head = {
            "dry-run": f"dry run: would {verb}",
            "nothing": "nothing held for",
            "noop": "nothing left to " + verb + " for",
            "complete": f"{verb} complete for",
        }[self.status]
        lines.append(f"{head} subject {plan.subject.key}=<value>")
        if self.row is not None:
            lines.append(f"erasure id {self.row.erasure_id} ({self.row.status})")
        rows = self.row.tables if self.row and self.status == "complete" else None
        for t in plan.touched_tables() if rows is None else []:
            what = f"{t.rows} row(s)" if t.rows else "older snapshots only"
            how = " (matched by name)" if t.by_name else ""
            origins = sorted({c.via for c in t.columns if c.via})
            if origins:
                how += f" (tagged through lineage from {', '.join(origins)})"
            lines.append(f"  table {t.table}: {what}{how}")
        for entry in rows or []:
            what = "older snapshots only" if entry.history_only else f"{entry.rows} row(s)"
            lines.append(f"  table {entry.table_name}: {what}, snapshot {entry.snapshot_id}")
        if plan.quarantine and plan.quarantine.rows and rows is None:
            lines.append(f"  table {QUARANTINE}: {plan.quarantine.rows} quarantined record(s)")
        for hit in plan.landed:
            lines.append(f"  landed file {hit.key}: {hit.records} record(s)")
        if self.row is not None:
            for f in self.row.landed_files:
                if f.rewritten:
                    lines.append(f"  rewrote landed file {f.path} (sha256 {f.sha256_after})")
            for m in self.row.maintenance:
                lines.append(f"  hygiene {m.table_name}: {m.actions}")
        for view in plan.views:
            lines.append(f"  view {view}: stores nothing (reads the tables above)")
        for column in plan.untagged:
            lines.append(
                f"  WARNING {column} is named like a subject column but not tagged: tag it "
                "(meta.subject_key) or pass --include-untagged"
            )
        lines += [f"  {m}" for m in self.messages]
        return "\n".join(lines)


def _row_dict(row: LogRow) -> dict[str, Any]:
    return json.loads(json.dumps(row.as_record(), default=str))


@contextlib.contextmanager
def erasure_lock(settings: Settings) -> Iterator[None]:
    """One erasure or rectification at a time per FLOE_HOME (a lock, not a lease: the
    operating system releases it when the process dies), holding the warehouse's
    writer lock too: builds, streams and maintenance wait for it (docs/reliability.md)."""
    from floe.runtime.locking import WriterLockTimeout, writer_lock

    settings.privacy_dir.mkdir(parents=True, exist_ok=True)
    with (settings.privacy_dir / "erasure.lock").open("w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ErasureError(
                "another floe forget / rectify is running on this lakehouse; wait for it"
            ) from None
        try:
            with writer_lock(settings, "floe privacy erasure"):
                yield
        except WriterLockTimeout as exc:
            raise ErasureError(str(exc)) from exc
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def subject_hash(subject: Subject, secrets: Secrets) -> str:
    """The subject as the log keeps it: salted HMAC of ``key=value``."""
    from floe.privacy.masking import hash_value

    return str(hash_value(f"{subject.key}={subject.value}", secrets.salt))


def parse_sets(pairs: list[str] | tuple[str, ...]) -> dict[str, str]:
    """``--set column=value`` pairs; one pair of matching quotes around a value is dropped
    (``--set phonenumber='000'`` as written in the seed)."""
    sets: dict[str, str] = {}
    for pair in pairs:
        column, sep, value = pair.partition("=")
        column = column.strip()
        if not sep or not column or not column.replace("_", "a").isalnum():
            raise SubjectError(f"--set {pair!r}: write it as <column>=<value>")
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        check_text(value, f"--set {column}")
        if column.lower() in sets:
            raise SubjectError(f"--set {column}: given twice")
        sets[column.lower()] = value
    if not sets:
        raise SubjectError("rectify needs at least one --set <column>=<value>")
    return sets


# --------------------------------------------------------------------------- entry points


def forget(
    spark: SparkSession,
    settings: Settings,
    tags: PrivacyTags,
    subject: Subject,
    *,
    dry_run: bool = False,
    include_landing: bool = False,
    include_untagged: bool = False,
    scan_landing: bool = True,
    progress: Progress | None = None,
) -> Outcome:
    """Erase ``subject`` from every table, file and snapshot (module docstring)."""
    return _run(
        spark,
        settings,
        tags,
        subject,
        None,
        dry_run=dry_run,
        include_landing=include_landing,
        include_untagged=include_untagged,
        scan_landing=scan_landing or include_landing,
        progress=progress,
    )


def rectify(
    spark: SparkSession,
    settings: Settings,
    tags: PrivacyTags,
    subject: Subject,
    sets: Mapping[str, str],
    *,
    dry_run: bool = False,
    include_untagged: bool = False,
    progress: Progress | None = None,
) -> Outcome:
    """Set ``sets`` (column -> value) on every row of ``subject``, with the same
    snapshot hygiene as an erasure: the old values survive in no file."""
    if not sets:
        raise SubjectError("rectify needs at least one --set <column>=<value>")
    return _run(
        spark,
        settings,
        tags,
        subject,
        dict(sets),
        dry_run=dry_run,
        include_landing=False,
        include_untagged=include_untagged,
        scan_landing=False,
        progress=progress,
    )


def _run(
    spark: SparkSession,
    settings: Settings,
    tags: PrivacyTags,
    subject: Subject,
    sets: dict[str, str] | None,
    *,
    dry_run: bool,
    include_landing: bool,
    include_untagged: bool,
    scan_landing: bool,
    progress: Progress | None,
) -> Outcome:
    from floe.privacy.masking import hash_value
    from floe.privacy.secrets import load_secrets

    say = progress or (lambda _m: None)
    operation = "forget" if sets is None else "rectify"
    secrets = load_secrets(settings)
    hashed = subject_hash(subject, secrets)
    spec = "" if sets is None else str(hash_value(json.dumps(sorted(sets.items())), secrets.salt))
    if dry_run:
        plan = build_plan(
            spark, settings, tags, subject, secrets, operation=operation, sets=sets,
            include_untagged=include_untagged, scan_landing=scan_landing, progress=say,
        )  # fmt: skip
        return Outcome(operation, "dry-run", plan)
    with erasure_lock(settings):
        log = ErasureLog(spark)
        pending = log.pending(operation, hashed, spec)
        plan = build_plan(
            spark, settings, tags, subject, secrets, operation=operation, sets=sets,
            include_untagged=include_untagged, scan_landing=scan_landing, progress=say,
        )  # fmt: skip
        if pending is None and plan.empty and not (include_landing and plan.landed):
            last = log.last_complete(operation, hashed)
            if last is not None:
                return Outcome(operation, "noop", plan, last)
            row = LogRow(operation, subject.key, hashed, spec, status="complete")
            row.completed_at = utc_now()
            row.columns_set = sorted(sets or {})
            row.detail = _detail(plan, include_landing, "nothing held")
            log.write(row)
            return Outcome(operation, "nothing", plan, row)
        row = pending or LogRow(operation, subject.key, hashed, spec)
        _journal(log, row, plan, sets, include_landing)
        say(f"journal: {row.erasure_id} {row.status}")
        _change_tables(spark, log, row, plan, say)
        if operation == "forget":
            _landing_and_ledger(spark, settings, log, row, plan, subject, include_landing, say)
        _hygiene(spark, settings, log, row, plan, say)
        _verify(spark, row, plan, say)
        row.status = "complete"
        row.completed_at = utc_now()
        log.write(row)
        say(f"journal: {row.erasure_id} complete")
        return Outcome(operation, "complete", plan, row)


def _detail(plan: Plan, include_landing: bool, note: str = "") -> str:
    return json.dumps(
        {
            "views": plan.views,
            "untagged": plan.untagged,
            "include_landing": include_landing,
            "landing_scanned": plan.landing_scanned,
            "note": note,
        },
        sort_keys=True,
    )


def _journal(
    log: ErasureLog,
    row: LogRow,
    plan: Plan,
    sets: Mapping[str, str] | None,
    include_landing: bool,
) -> None:
    """Record (or extend, when resuming) the plan before anything changes."""
    for target in plan.touched_tables():
        if row.table(target.table) is None:
            row.tables.append(
                TableEntry(
                    target.table,
                    target.rows,
                    target.snapshot_before,
                    history_only=not target.rows,
                )
            )
    q = plan.quarantine
    if q and q.rows and row.table(QUARANTINE) is None:
        row.tables.append(TableEntry(QUARANTINE, q.rows, q.snapshot_before))
    known = {(f.feed, f.path) for f in row.landed_files}
    hits = {(h.feed, h.key): h for h in plan.landed}
    for (feed, key), n in sorted(plan.ingested_files.items()):
        if (feed, key) not in known:
            hit = hits.get((feed, key))
            row.landed_files.append(
                FileEntry(
                    feed,
                    key,
                    hit.records if hit else n,
                    True,
                    sha256_before=hit.sha256 if hit else None,
                )
            )
            known.add((feed, key))
    for (feed, key), hit in sorted(hits.items()):
        if (feed, key) not in known:
            row.landed_files.append(
                FileEntry(feed, key, hit.records, False, sha256_before=hit.sha256)
            )
    row.columns_set = sorted(sets or {})
    row.detail = _detail(plan, include_landing)
    log.write(row)


# --------------------------------------------------------------------------- changing tables


def _snapshot_after(spark: SparkSession, table: str, before: int | None) -> tuple[int, datetime]:
    """The first snapshot committed on top of ``before`` (the change of an interrupted run)."""
    from pyspark.sql import functions as F

    snapshots = spark.table(f"{quote_table(table)}.snapshots")
    if before is None:
        snapshots = snapshots.where(F.col("parent_id").isNull())
    else:
        snapshots = snapshots.where(F.col("parent_id") == F.lit(before))
    row = snapshots.orderBy("committed_at").first()
    if row is None:  # expired already, or changed by someone else: report the current one
        row = spark.table(f"{quote_table(table)}.snapshots").orderBy(F.desc("committed_at")).first()
    if row is None:
        raise ErasureError(f"{table} has no snapshot")
    return int(row["snapshot_id"]), row["committed_at"]


def _current(spark: SparkSession, table: str) -> tuple[int | None, datetime | None]:
    from pyspark.sql import functions as F

    row = spark.table(f"{quote_table(table)}.snapshots").orderBy(F.desc("committed_at")).first()
    return (int(row["snapshot_id"]), row["committed_at"]) if row else (None, None)


def _change(
    spark: SparkSession, target: TableTarget, rectify: bool, table: str | None = None
) -> None:
    table = table or quote_table(target.table)
    if rectify:
        sets = ", ".join(f"{quote_path(c)} = :{p}" for c, p in target.set_columns.items())
        differs = " or ".join(
            f"not ({quote_path(c)} <=> :{p})" for c, p in target.set_columns.items()
        )
        spark.sql(
            f"update {table} set {sets} where ({target.predicate}) and ({differs})",
            args={**target.params, **target.set_params},
        )
    else:
        spark.sql(f"delete from {table} where {target.predicate}", args=target.params)


# -- branches and tags (environments, docs/envs.md; docs/privacy.md "Branches and tags"):
# the subject is erased on every ref, not only on main. A tag cannot move to a new
# commit of its own, so its snapshot is changed on a scratch branch and the tag replaced.
_REF_NAME = re.compile(r"^[A-Za-z0-9_]+$")
_SCRATCH = "floe_erasure_scratch"


def _other_refs(spark: SparkSession, table: str) -> list[tuple[str, str, int]]:
    rows = spark.sql(
        f"select name, type, snapshot_id from {quote_table(table)}.refs where name != 'main'"
    ).collect()
    refs = []
    for name, kind, snapshot in rows:
        if name == _SCRATCH:
            continue
        if not _REF_NAME.match(name):
            raise ErasureError(
                f"{table} has a {kind.lower()} named {name!r} that floe cannot address: rename "
                "it to letters, digits and underscores, then run the same command again"
            )
        refs.append((str(name), str(kind), int(snapshot)))
    return refs


def _ref_rows(spark: SparkSession, target: TableTarget, ref: str) -> int:
    frame = spark.sql(f"select * from {quote_table(target.table)} version as of '{ref}'")
    return frame.where(target.condition()).count()


def _change_other_refs(
    spark: SparkSession, target: TableTarget, rectify: bool, say: Progress
) -> bool:
    """Erase (rectify) the subject on every branch and tag of the table but main."""
    table = quote_table(target.table)
    changed = False
    for name, kind, snapshot in _other_refs(spark, target.table):
        n = _ref_rows(spark, target, name)
        if rectify:
            frame = spark.sql(f"select * from {table} version as of '{name}'")
            n = frame.where(target.condition()).where(target.differs()).count()
        if not n:
            continue
        say(f"change: {target.table} {kind.lower()} {name} ({n} row(s))")
        if kind == "BRANCH":
            _change(spark, target, rectify, f"{table}.`branch_{name}`")
        else:
            spark.sql(
                f"alter table {table} create or replace branch {_SCRATCH} as of version {snapshot}"
            )
            _change(spark, target, rectify, f"{table}.`branch_{_SCRATCH}`")
            head = spark.sql(
                f"select snapshot_id from {table}.refs where name = '{_SCRATCH}'"
            ).collect()[0][0]
            spark.sql(f"alter table {table} replace tag {name} as of version {head}")
            spark.sql(f"alter table {table} drop branch if exists {_SCRATCH}")
        changed = True
    return changed


def _change_tables(
    spark: SparkSession, log: ErasureLog, row: LogRow, plan: Plan, say: Progress
) -> None:
    rectify = plan.operation == "rectify"
    fresh = {t.table: t for t in plan.tables}
    for entry in row.tables:
        if entry.history_only or entry.table_name == QUARANTINE:
            continue
        target = fresh.get(entry.table_name)
        if target is not None and _change_other_refs(spark, target, rectify, say):
            _needs_hygiene_again(row, entry.table_name)
        if target is not None and target.rows:
            say(f"change: {entry.table_name} ({target.rows} row(s))")
            _change(spark, target, rectify)
            _needs_hygiene_again(row, entry.table_name)
            entry.rows = target.rows if entry.snapshot_id is None else entry.rows + target.rows
            entry.snapshot_id, entry.committed_at = _current(spark, entry.table_name)
        elif entry.snapshot_id is None:
            # nothing left: the interrupted run changed it (its rows are the journaled ones)
            entry.snapshot_id, entry.committed_at = _snapshot_after(
                spark, entry.table_name, entry.snapshot_before
            )
    q = plan.quarantine
    quarantined = row.table(QUARANTINE)
    if quarantined is not None:
        entry = quarantined
        if q is not None and q.rows:
            say(f"change: {QUARANTINE} ({q.rows} record(s))")
            _delete_quarantined(spark, q.fingerprints)
            _needs_hygiene_again(row, QUARANTINE)
            entry.rows = q.rows if entry.snapshot_id is None else entry.rows + q.rows
            entry.snapshot_id, entry.committed_at = _current(spark, QUARANTINE)
        elif entry.snapshot_id is None:
            entry.snapshot_id, entry.committed_at = _snapshot_after(
                spark, QUARANTINE, entry.snapshot_before
            )
    if row.status == "planned":
        row.status = "erased"
    log.write(row)
    say(f"journal: {row.erasure_id} {row.status}")


def _needs_hygiene_again(row: LogRow, table: str) -> None:
    row.maintenance = [m for m in row.maintenance if m.table_name != table]


def _delete_quarantined(spark: SparkSession, fingerprints: list[str]) -> None:
    import uuid

    view = f"floe_erased_records_{uuid.uuid4().hex}"
    local_frame(spark, [(fp,) for fp in fingerprints], "fp string").createOrReplaceTempView(view)
    try:
        spark.sql(
            f"delete from {QUARANTINE} where {QUARANTINE_FINGERPRINT} in (select fp from {view})"
        )
    finally:
        spark.catalog.dropTempView(view)


# --------------------------------------------------------------------------- landing + ledger


def _landing_and_ledger(
    spark: SparkSession,
    settings: Settings,
    log: ErasureLog,
    row: LogRow,
    plan: Plan,
    subject: Subject,
    include_landing: bool,
    say: Progress,
) -> None:
    from floe.privacy.landing import rewrite_file, sha256_of

    if include_landing:
        feeds = _feeds_with_subject(plan, subject, settings)
        for entry in row.landed_files:
            if entry.rewritten or entry.feed not in feeds:
                continue
            feed, columns, matcher = feeds[entry.feed]
            path = settings.landing / entry.path
            if not path.is_file():
                continue
            say(f"landing: rewriting {entry.path}")
            removed = rewrite_file(feed, path, columns, subject.value, matcher)
            after = sha256_of(path)
            # removed == 0 on a resumed run whose rewrite had landed before the crash
            entry.rewritten = bool(removed) or (after != entry.sha256_before)
            entry.sha256_after = after
        log.write(row)
    _refresh_ledger(spark, settings, row, say)


def _feeds_with_subject(
    plan: Plan, subject: Subject, settings: Settings
) -> dict[str, tuple[Any, list[str], Any]]:
    from floe.privacy.matcher import RecordMatcher
    from floe.privacy.plan import matcher_spec

    out: dict[str, tuple[Any, list[str], Any]] = {}
    for name, (feed, columns) in plan.subject_feeds.items():
        matcher = None
        if feed.kind == "stream":
            fmt, paths, definitions = matcher_spec(feed, columns, settings)
            matcher = RecordMatcher(fmt, paths, subject.value, definitions)
        out[name] = (feed, [c.column for c in columns], matcher)
    return out


def _refresh_ledger(spark: SparkSession, settings: Settings, row: LogRow, say: Progress) -> None:
    """``raw.landed_files`` of every touched, ingested file recomputed from the tables:
    loaded = its rows in ``raw.<feed>``, quarantined = its rows in ``raw.quarantine``,
    records_in = their sum (reconciliation holds); a rewritten file's size and
    modification time (and checksum, if the ledger keeps one) are the new file's."""
    import uuid

    from pyspark.sql import functions as F

    from floe.feeds.files import file_checksum
    from floe.feeds.ledger import mtime_stamp

    files = [f for f in row.landed_files if f.ingested]
    if not files or not spark.catalog.tableExists(LANDED_FILES):
        return
    say(f"ledger: recounting {len(files)} file(s) in {LANDED_FILES}")
    updates = []
    by_feed: dict[str, list[str]] = {}
    for f in files:
        by_feed.setdefault(f.feed, []).append(f.path)
    counts: dict[tuple[str, str], list[int]] = {}
    for feed, keys in by_feed.items():
        raw = f"raw.{feed}"
        if spark.catalog.tableExists(raw):
            for r in (
                spark.table(raw)
                .where(F.col("_source_file").isin(keys))
                .groupBy("_source_file")
                .count()
                .collect()
            ):
                counts.setdefault((feed, r[0]), [0, 0])[0] = int(r[1])
    if spark.catalog.tableExists(QUARANTINE):
        for r in (
            spark.table(QUARANTINE)
            .where(F.col("feed").isin(list(by_feed)))
            .where(F.col("_source_file").isin([f.path for f in files]))
            .groupBy("feed", "_source_file")
            .count()
            .collect()
        ):
            counts.setdefault((r[0], r[1]), [0, 0])[1] = int(r[2])
    for f in files:
        loaded, quarantined = counts.get((f.feed, f.path), [0, 0])
        size = modified = checksum = None
        path = settings.landing / f.path
        if f.rewritten and path.is_file():
            # Discovery's precision and format (floe.feeds.ledger.report_changes): the
            # mtime to the microsecond without a float, the block checksum sha256x8m.
            stat = path.stat()
            size = stat.st_size
            modified = mtime_stamp(stat.st_mtime_ns)
            checksum = file_checksum(path)
        updates.append(
            (f.feed, f.path, loaded, quarantined, loaded + quarantined, size, modified, checksum)
        )
    view = f"floe_ledger_updates_{uuid.uuid4().hex}"
    local_frame(
        spark,
        updates,
        "feed string, _source_file string, loaded bigint, quarantined bigint, records_in bigint, "
        "bytes bigint, modified_at string, checksum string",
    ).withColumn("modified_at", F.col("modified_at").cast("timestamp")).createOrReplaceTempView(
        view
    )
    ledger_columns = {c.lower() for c in spark.table(LANDED_FILES).columns}
    extra = ""
    if "checksum" in ledger_columns:
        extra = ", checksum = coalesce(u.checksum, t.checksum)"
    try:
        spark.sql(
            f"merge into {LANDED_FILES} as t using {view} as u "
            "on t.feed = u.feed and t._source_file = u._source_file "
            "when matched and (t.loaded <> u.loaded or t.quarantined <> u.quarantined "
            "or t.records_in <> u.records_in or u.bytes is not null) then update set "
            "loaded = u.loaded, quarantined = u.quarantined, records_in = u.records_in, "
            "bytes = coalesce(u.bytes, t.bytes), "
            f"modified_at = coalesce(u.modified_at, t.modified_at){extra}"
        )
    finally:
        spark.catalog.dropTempView(view)


# --------------------------------------------------------------------------- hygiene


def _hygiene(
    spark: SparkSession, settings: Settings, log: ErasureLog, row: LogRow, plan: Plan, say: Progress
) -> None:
    from floe.maintenance.core import (
        apply_row_deletes,
        expire_all_but_current,
        remove_orphans_before,
        rewrite_all_manifests,
    )

    cutoff = utc_now()
    done = {m.table_name for m in row.maintenance}
    for entry in row.tables:
        table = entry.table_name
        if table in done or not spark.catalog.tableExists(table):
            continue
        say(f"hygiene: {table}")
        actions = apply_row_deletes(spark, table, catalog=settings.catalog_name)
        manifests = rewrite_all_manifests(spark, table, catalog=settings.catalog_name)
        if manifests:
            actions.append(f"rewrite_manifests: {manifests}")
        expired = expire_all_but_current(spark, table, catalog=settings.catalog_name)
        actions.append(f"expire_snapshots: {expired}")
        orphans = remove_orphans_before(spark, table, cutoff, catalog=settings.catalog_name)
        actions.append(f"remove_orphan_files: {len(orphans)}")
        row.maintenance.append(MaintenanceEntry(table, ", ".join(actions)))
        log.write(row)
    for feed in plan.stream_feeds:
        staging = settings.state_dir / "decode_staging" / feed
        if staging.exists():
            say(f"hygiene: removing decode staging of {feed}")
            shutil.rmtree(staging, ignore_errors=True)


def _verify(spark: SparkSession, row: LogRow, plan: Plan, say: Progress) -> None:
    """No changed table still holds the subject (or, rectifying, an old value)."""
    say("verify: recounting")
    fresh = {t.table: t for t in plan.tables}
    left = []
    for entry in row.tables:
        target = fresh.get(entry.table_name)
        if target is None or entry.table_name == QUARANTINE:
            continue
        frame = spark.table(quote_table(target.table)).where(target.condition())
        if plan.operation == "rectify":
            frame = frame.where(target.differs())
        n = frame.count()
        if n:
            left.append(f"{target.table}: {n} row(s)")
        for name, kind, _snapshot in _other_refs(spark, target.table):
            ref_frame = spark.sql(
                f"select * from {quote_table(target.table)} version as of '{name}'"
            ).where(target.condition())
            if plan.operation == "rectify":
                ref_frame = ref_frame.where(target.differs())
            n = ref_frame.count()
            if n:
                left.append(f"{target.table} {kind.lower()} {name}: {n} row(s)")
    if left:
        raise ErasureError(
            "rows of the subject appeared while erasing (is something writing the lakehouse?): "
            + "; ".join(left)
            + ". Stop the writer and run the same command again: it resumes."
        )
