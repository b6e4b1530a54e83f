"""Settled steps: "this step found nothing to do, and none of its inputs has changed since".

A build step that reads a few relations and, most builds, finds nothing to do (an
scd2 dimension with no pending load: docs/scd2.md, "Nothing pending") still pays for
the query that finds it out. After a run that left nothing to do, the step remembers
the fingerprints of its inputs (:func:`floe.runtime.tables.read_fingerprint`: a table's
current snapshot; a view's plan and the snapshots of the tables it reads) in
``$FLOE_HOME/state/settled/<kind>/<name>.json``. The next run compares them first (a plan
analysis and a metadata read per input, no Spark job): equal means nothing can have
become due. Anything else — a commit to any input, a changed view, an input that
cannot be fingerprinted, a missing or unreadable memo, other `salt` (e.g. a run date)
— runs the step in full, which is always right: the memo only caches its answer.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from floe.runtime.tables import read_fingerprint

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from floe.runtime.settings import Settings

log = logging.getLogger(__name__)

VERSION = 1
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


def inputs_fingerprint(spark: SparkSession, relations: Sequence[str], salt: str) -> str | None:
    """One hash of every relation's read fingerprint and ``salt``; None if one has none."""
    digest = hashlib.sha256(f"{VERSION}\0{salt}\n".encode())
    for relation in relations:
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


def is_settled(
    spark: SparkSession,
    settings: Settings,
    kind: str,
    name: str,
    relations: Sequence[str],
    salt: str = "",
) -> bool:
    """True when the step's last run left nothing to do and its inputs are unchanged."""
    path = _path(settings, kind, name)
    try:
        memo = json.loads(path.read_text())
    except (OSError, ValueError):
        return False
    if not isinstance(memo, dict) or memo.get("version") != VERSION:
        return False
    now = inputs_fingerprint(spark, relations, salt)
    return now is not None and memo.get("inputs") == now


def remember(
    spark: SparkSession,
    settings: Settings,
    kind: str,
    name: str,
    relations: Sequence[str],
    salt: str = "",
) -> None:
    """Record that the step has nothing left to do as of its inputs now.

    Call it only after the step's own commits. Written atomically; a failure to write
    (or inputs without a fingerprint) removes the memo, never fails the step.
    """
    path = _path(settings, kind, name)
    now = inputs_fingerprint(spark, relations, salt)
    try:
        if now is None:
            path.unlink(missing_ok=True)
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"version": VERSION, "inputs": now}))
        os.replace(tmp, path)
    except OSError as exc:
        log.warning("%s %s: could not remember its inputs (%s)", kind, name, exc)
