"""Docs of a raw feed model, derived from its feed (no YAML entry repeats them).

A raw model is ``return dbt.source(<feed>)``: its description and the description of
every column follow from the feed's declaration (description, declared columns), the
registry schema (stream fields' ``doc`` / ``description``) and the kind's provenance
columns. The docs coverage check and the docs site use this one function.
"""

from __future__ import annotations

from pathlib import Path

from floe.feeds.declarations import Feed
from floe.feeds.kinds import feed_kind, stream


def raw_model_docs(feed: Feed, project_dir: Path) -> tuple[str, dict[str, str]]:
    """(model description, column -> description) of the raw model of ``feed``."""
    kind = feed_kind(feed.kind)
    columns: dict[str, str] = {}
    if feed.kind == "stream":
        columns.update(stream.field_docs(feed, project_dir))
    columns.update({c.name: c.description for c in feed.columns if c.description})
    columns.update(kind.provenance_docs(feed))
    description = (
        f"Raw rows of the landed feed `{feed.id}` ({feed.kind}), appended once per landed "
        f"file; bad records go to raw.quarantine (docs/feeds.md). {feed.description}"
    ).strip()
    return description, columns
