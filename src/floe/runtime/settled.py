"""Skip when unchanged: "this step found nothing to do, and none of its inputs has changed since".

The one home of floe's memos, with one store (docs/decisions/0040-one-skip-memo-store.md).
A build step that reads a few relations and, most builds, finds nothing to do still pays
for the query that finds it out: a feed's ingest reading its ledger (docs/feeds.md,
"Nothing new"), an scd2 dimension with no pending load (docs/scd2.md, "Nothing
pending"), a ``table`` model whose SQL and inputs are those of its last build
(``table/skip_unchanged.sql``). After a run that left nothing to do, the step remembers
what its inputs were in ``$FLOE_HOME/state/settled/<kind>/<name>.json``; the next run
compares them first (metadata reads, no Spark job): equal means nothing can have become
due. Anything else — a commit to any input, a changed view, an input that cannot be
fingerprinted, a missing or unreadable memo, other ``salt`` (a run date, a landing
listing, a model's compiled SQL) — runs the step in full, which is always right: the
memo only caches its answer.

What a step keys on, by input kind:

* a relation name: its read fingerprint (:func:`floe.runtime.tables.read_fingerprint`:
  a table's current snapshot; a view's plan and the snapshots of the tables it reads);
* :class:`RowsOf`: one writer's rows of a shared table (e.g. one dimension's rows of the
  scd2 ledger): changed only when a commit since the memo may have touched those rows
  (:func:`floe.runtime.tables.rows_unchanged_since`), not when another writer appended;
* :class:`TableAt`: a table's identity (uuid) and the snapshot of one of its refs
  (``main`` or an environment's branch): changed by any commit, or, with
  ``same_rows_ok``, by any commit but a compaction (a rebuilt table's own state, so a
  table changed by anyone else is rebuilt).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from floe.runtime.tables import (
    current_state,
    read_fingerprint,
    rows_same_since,
    rows_unchanged_since,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from floe.runtime.settings import Settings

log = logging.getLogger(__name__)

VERSION = 2
# The kinds of step that keep a memo here (the folder under state/settled/).
FEEDS = "feeds"  # a feed's "nothing new" (floe.feeds.ingest), named by the feed id
SCD2 = "scd2"  # an scd2 dimension's "no pending loads" (scd2.sql), named by the table
TABLES = "tables"  # a table model's "same inputs" (table.sql), by table [+ "." + branch]
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


@dataclass(frozen=True)
class RowsOf:
    """The rows of Iceberg table ``relation`` whose string ``column`` equals ``value``."""

    relation: str
    column: str
    value: str

    def key(self) -> str:
        return json.dumps([self.relation, self.column, self.value])


@dataclass(frozen=True)
class TableAt:
    """Iceberg table ``relation`` as of the snapshot of its ``ref``; with ``same_rows_ok``,
    commits that keep its rows (compactions) leave it unchanged."""

    relation: str
    ref: str = "main"
    same_rows_ok: bool = False

    def key(self) -> str:
        return json.dumps(["table", self.relation, self.ref])


Input = str | RowsOf | TableAt


def inputs_fingerprint(spark: SparkSession, relations: Sequence[Input], salt: str) -> str | None:
    """One hash of every relation's read fingerprint and ``salt``; None if one has none.

    A :class:`RowsOf` input adds only what it names; whether its rows changed is
    answered from the table's history (:func:`is_settled`).
    """
    digest = hashlib.sha256(f"{VERSION}\0{salt}\n".encode())
    for relation in relations:
        if isinstance(relation, RowsOf | TableAt):
            digest.update(f"rows\0{relation.key()}\n".encode())
            continue
        try:
            fingerprint = read_fingerprint(spark.table(relation))
        except Exception:  # missing or unresolvable: nothing to compare
            return None
        if fingerprint is None:
            return None
        digest.update(f"{relation}\0{fingerprint}\n".encode())
    return digest.hexdigest()


def _path(settings: Settings, kind: str, name: str) -> Path:
    for part in (kind, name):
        if not part or not set(part) <= _NAME_CHARS or part.startswith("."):
            raise ValueError(f"not a settled-step name: {part!r}")
    return settings.state_dir / "settled" / kind / f"{name}.json"


def _rows_states(spark: SparkSession, relations: Sequence[Input]) -> dict[str, Any] | None:
    """Each :class:`RowsOf` and :class:`TableAt` input's table uuid and snapshot (of its
    ref); None if one is missing, or a :class:`TableAt` has no snapshot."""
    states: dict[str, Any] = {}
    for rows in relations:
        if isinstance(rows, RowsOf):
            state = current_state(spark, rows.relation)
        elif isinstance(rows, TableAt):
            state = current_state(spark, rows.relation, rows.ref)
            if state is not None and state.snapshot_id is None:
                return None
        else:
            continue
        if state is None:
            return None
        states[rows.key()] = [state.uuid, state.snapshot_id]
    return states


def _unchanged(spark: SparkSession, rows: RowsOf | TableAt, since: int) -> bool:
    """Nothing that counts for input ``rows`` was committed after snapshot ``since``."""
    if isinstance(rows, RowsOf):
        return rows_unchanged_since(spark, rows.relation, since, rows.column, rows.value)
    return rows.same_rows_ok and rows_same_since(spark, rows.relation, since, rows.ref)


def is_settled(
    spark: SparkSession,
    settings: Settings,
    kind: str,
    name: str,
    relations: Sequence[Input],
    salt: str = "",
) -> bool:
    """True when the step's last run left nothing to do and its inputs are unchanged.

    When it is, and a table under a :class:`RowsOf` or :class:`TableAt` input has moved
    on (other writers' commits, compactions), the memo is brought up to its current
    snapshot, so the next check reads only the commits made after this one.
    """
    path = _path(settings, kind, name)
    try:
        memo = json.loads(path.read_text())
    except (OSError, ValueError):
        return False
    if not isinstance(memo, dict) or memo.get("version") != VERSION:
        return False
    now = inputs_fingerprint(spark, relations, salt)
    if now is None or memo.get("inputs") != now:
        return False
    seen = memo.get("rows")
    states = _rows_states(spark, relations)
    if not isinstance(seen, dict) or states is None:
        return False
    for rows in relations:
        if isinstance(rows, str):
            continue
        then = seen.get(rows.key())
        if not isinstance(then, list) or len(then) != 2 or then[0] != states[rows.key()][0]:
            return False  # never seen, or another table of that name
        if then[1] != states[rows.key()][1] and not _unchanged(spark, rows, then[1]):
            return False
    if states != seen:
        _write(path, {"version": VERSION, "inputs": now, "rows": states}, kind, name)
    return True


def remember(
    spark: SparkSession,
    settings: Settings,
    kind: str,
    name: str,
    relations: Sequence[Input],
    salt: str = "",
) -> None:
    """Record that the step has nothing left to do as of its inputs now.

    Call it only after the step's own commits. Written atomically; a failure to write
    (or inputs without a fingerprint) removes the memo, never fails the step.
    """
    path = _path(settings, kind, name)
    now = inputs_fingerprint(spark, relations, salt)
    states = _rows_states(spark, relations) if now is not None else None
    if now is None or states is None:
        try:
            path.unlink(missing_ok=True)
        except OSError as exc:
            log.warning("%s %s: could not forget its inputs (%s)", kind, name, exc)
        return
    _write(path, {"version": VERSION, "inputs": now, "rows": states}, kind, name)


def _write(path: Path, memo: dict[str, Any], kind: str, name: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(memo))
        os.replace(tmp, path)
    except OSError as exc:
        log.warning("%s %s: could not remember its inputs (%s)", kind, name, exc)


def forget(settings: Settings, kind: str, name: str) -> None:
    """Remove the step's memo (its next run takes the full path); a failure is logged."""
    path = _path(settings, kind, name)
    try:
        path.unlink(missing_ok=True)
    except OSError as exc:
        log.warning("%s %s: could not forget its inputs (%s)", kind, name, exc)
