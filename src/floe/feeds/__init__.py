"""Landed feeds: declared once in YAML, ingested by one generic path (docs/feeds.md).

Public surface:

* :func:`load_feeds` / :func:`find_feed` — the feed list from the project's YAML
  (:mod:`floe.feeds.sources`);
* :class:`Feed`, :class:`FeedError`, :class:`LandedFile`;
* :func:`floe.feeds.ingest.ingest` — new rows of a feed (raw models, ``floe stream``);
* :mod:`floe.feeds.ledger` — the one ledger of done files, quarantine and counts;
* :mod:`floe.feeds.kinds` — the feed kinds (layout, reading) and their registry.
"""

from floe.feeds.declarations import Column, Feed, FeedError
from floe.feeds.files import LandedFile
from floe.feeds.sources import find_feed, load_feeds

__all__ = ["Column", "Feed", "FeedError", "LandedFile", "find_feed", "load_feeds"]
