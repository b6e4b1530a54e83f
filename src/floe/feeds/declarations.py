"""Feed declarations: what a landed feed is (:class:`Feed`), as every kind sees it.

A feed is a dbt ``sources:`` table whose ``config.meta.floe`` (or ``meta.floe``) says
what lands (docs/feeds.md). The values here are the floor of the feeds room: the kinds
(:mod:`floe.feeds.kinds`) and everything else build on them; :mod:`floe.feeds.sources`
reads them from the project's YAML or dbt's graph.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# Options every kind understands; each kind adds its own (floe.feeds.kinds.*.OPTIONS).
COMMON_OPTIONS = frozenset(
    {"kind", "landing", "key", "ordering", "op_column", "partition_by", "demo", "enabled"}
)
_IDENTIFIER_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")


class FeedError(ValueError):
    """A feed declaration (or a landed file of a feed) is wrong; the message says how to fix it."""


@dataclass(frozen=True)
class Column:
    """A declared column of a feed: name, Spark SQL type (may be empty) and description."""

    name: str
    data_type: str = ""
    description: str = ""


@dataclass(frozen=True)
class Feed:
    """One landed feed: a dbt source table plus what floe needs to ingest it."""

    source: str  # dbt source name (e.g. "streams")
    name: str  # source table name; also the raw table's name (raw.<name>)
    kind: str
    landing: str  # folder relative to the landing root, POSIX separators
    options: Mapping[str, Any] = field(default_factory=dict)
    columns: tuple[Column, ...] = ()
    description: str = ""

    @property
    def id(self) -> str:
        """``<source>.<name>``: how dbt's ``source()`` names the feed."""
        return f"{self.source}.{self.name}"

    @property
    def raw_table(self) -> str:
        """The Iceberg table its raw model appends to."""
        return f"raw.{self.name}"

    @property
    def key(self) -> tuple[str, ...]:
        return _names(self.options.get("key"))

    def option(self, name: str, default: Any = None) -> Any:
        value = self.options.get(name)
        return default if value is None else value

    def column_types(self) -> list[tuple[str, str]]:
        """(name, Spark SQL type) of the declared columns; every one must be typed."""
        untyped = [c.name for c in self.columns if not c.data_type]
        if untyped or not self.columns:
            raise FeedError(
                f"feed {self.id} ({self.kind}): declare every column with a data_type in its "
                f"sources YAML (untyped: {', '.join(untyped) or 'no columns declared'})"
            )
        return [(c.name, c.data_type) for c in self.columns]


def _names(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(str(v) for v in value)


def check_identifier(value: str, what: str) -> str:
    """``value`` if it is a plain lowercase SQL identifier, else a FeedError naming ``what``."""
    if not value or value[0].isdigit() or not set(value) <= _IDENTIFIER_CHARS:
        raise FeedError(
            f"{what} {value!r} must be a lowercase identifier ([a-z0-9_], no digit first)"
        )
    return value
