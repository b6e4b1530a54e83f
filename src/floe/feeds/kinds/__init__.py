"""One module per feed kind; each owns its kind's landing layout (docs/feeds.md).

A kind module provides:

* ``OPTIONS`` — the ``meta.floe`` options it understands beyond the common ones;
* ``validate(feed)`` — raises :class:`~floe.feeds.FeedError` on a bad declaration;
* ``discover(feed, landing)`` — the feed's landed files (:class:`~floe.feeds.LandedFile`,
  ledger key and per-file attributes), in the order they must be applied;
* ``read(spark, feed, files, ctx)`` — a :class:`~floe.feeds.kinds.base.Batch` of raw
  rows, per-file counts and quarantined records;
* ``empty(spark, feed, ctx)`` — the raw table's shape with no rows;
* ``generate(feed, opts, report)`` — deterministic demo files in the kind's layout.
"""

from __future__ import annotations

import importlib
from types import ModuleType


def kind_module(kind: str) -> ModuleType:
    """The module implementing feed kind ``kind`` (one of floe.feeds.declarations.KINDS)."""
    from floe.feeds.declarations import KINDS, FeedError

    if kind not in KINDS:
        raise FeedError(f"unknown feed kind {kind!r}; known: {', '.join(KINDS)}")
    return importlib.import_module(f"floe.feeds.kinds.{kind}")
