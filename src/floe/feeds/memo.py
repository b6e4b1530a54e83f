"""What a feed's last complete ingest saw: the shortcut for "nothing new".

Deciding that a feed has nothing new costs reads of the ledger and of the raw table
(:func:`floe.feeds.ledger.done_files`), about a second per feed per build on a small
machine, and a scan of the raw table's ``_source_file`` that grows with the table.
A build with nothing landed pays it for every feed.

After an ingest that left every discovered file done — the batch committed and
reconciled, no file waiting to settle, none skipped — floe remembers, per feed, in
``$FLOE_HOME/state/feeds/<feed id>.json``:

* the landing listing: a hash of every discovered file's ledger key, size and
  modification time (ns);
* the raw table's Iceberg uuid and current snapshot id right after that commit.

The next ingest lists the landing zone (no Spark) and loads the raw table's current
snapshot (milliseconds, :func:`floe.runtime.tables.current_state`). If both are what
was remembered, nothing landed, nothing changed and nothing touched the raw table
since everything was known done: the answer is "nothing new" without reading the
ledger. Anything else — a new, changed or removed file, any commit to the raw table
(an ingest, an erasure, a compaction), another table of the same name, a missing or
unreadable memo — takes the full path, which is always right; the memo is a cache of
its answer, never a second ledger. docs/feeds.md, "Nothing new".
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from floe.feeds.declarations import Feed
from floe.feeds.files import LandedFile
from floe.runtime.settings import Settings
from floe.runtime.tables import current_state

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)

VERSION = 1


def listing(files: Sequence[LandedFile]) -> str:
    """A hash of the discovered files: key, size and modification time of each."""
    digest = hashlib.sha256()
    for f in sorted(files, key=lambda f: f.key):
        digest.update(f"{f.key}\0{f.size}\0{f.mtime_ns}\n".encode())
    return digest.hexdigest()


def _path(settings: Settings, feed: Feed) -> Path:
    return settings.state_dir / "feeds" / f"{feed.id}.json"


def _state(spark: SparkSession, feed: Feed) -> dict[str, object] | None:
    state = current_state(spark, feed.raw_table)
    if state is None or state.snapshot_id is None:
        return None
    return {"table_uuid": state.uuid, "snapshot_id": state.snapshot_id}


def nothing_new(spark: SparkSession, settings: Settings, feed: Feed, seen: str) -> bool:
    """True when the landing listing ``seen`` and the raw table are as remembered."""
    try:
        memo = json.loads(_path(settings, feed).read_text())
    except (OSError, ValueError):
        return False
    if not isinstance(memo, dict) or memo.get("version") != VERSION or memo.get("listing") != seen:
        return False
    now = _state(spark, feed)
    return now is not None and all(memo.get(k) == v for k, v in now.items())


def remember(spark: SparkSession, settings: Settings, feed: Feed, seen: str) -> None:
    """Record that every file of listing ``seen`` is done as of the raw table's commit now.

    Only after the raw rows are committed (and reconciled). Written atomically; a
    failure to write is logged, never fatal: the next build takes the full path.
    """
    now = _state(spark, feed)
    path = _path(settings, feed)
    if now is None:
        forget(settings, feed)
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"version": VERSION, "listing": seen, **now}, sort_keys=True))
        os.replace(tmp, path)
    except OSError as exc:
        log.warning("feed %s: could not remember its landing listing (%s)", feed.id, exc)


def forget(settings: Settings, feed: Feed) -> None:
    try:
        _path(settings, feed).unlink()
    except FileNotFoundError:
        pass
    except OSError as exc:
        log.warning("feed %s: could not remove %s (%s)", feed.id, _path(settings, feed), exc)
