"""Landed feeds: declared once in YAML, ingested by one generic path (docs/feeds.md).

Public surface:

* :func:`load_feeds` / :func:`find_feed` — the feed list from the project's YAML;
* :class:`Feed`, :class:`FeedError`, :class:`LandedFile`;
* :func:`floe.feeds.ingest.ingest` — new rows of a feed (raw models, ``floe stream``);
* :mod:`floe.feeds.ledger` — the one ledger of done files, quarantine and counts;
* :mod:`floe.feeds.kinds` — one module per feed kind (layout, reading, demo data).
"""

from floe.feeds.declarations import Column, Feed, FeedError, find_feed, load_feeds
from floe.feeds.files import LandedFile

__all__ = ["Column", "Feed", "FeedError", "LandedFile", "find_feed", "load_feeds"]
