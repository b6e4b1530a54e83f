"""Feed declarations read from the dbt project: the one list of what lands.

Every landed feed is a dbt ``sources:`` table whose ``config.meta.floe`` (or ``meta.floe``)
says what the feed is (docs/feeds.md):

.. code-block:: yaml

    sources:
      - name: streams
        schema: landing
        config: {meta: {floe: {kind: stream}}}      # defaults for every table below
        tables:
          - name: ventilator
            config:
              meta:
                floe:
                  registry_schema: ventilator
                  timestamps: {eventtime: "%Y-%m-%d %H:%M:%S"}

Two readers build :class:`Feed` objects from the same dictionaries, so they cannot
disagree: :func:`load_feeds` parses the YAML files of a project (the generator,
``floe stream``, ``floe generate`` — no dbt run needed), and
:func:`feed_from_node` takes a source node of dbt's graph (raw models during
``dbt build``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from floe.feeds.declarations import COMMON_OPTIONS, Column, Feed, FeedError, check_identifier
from floe.feeds.kinds import KINDS, feed_kind


def _meta(entry: Mapping[str, Any]) -> dict[str, Any]:
    """``config.meta.floe`` merged over the older top-level ``meta.floe``."""
    merged: dict[str, Any] = {}
    for meta in ((entry.get("meta") or {}), ((entry.get("config") or {}).get("meta") or {})):
        floe = meta.get("floe") if isinstance(meta, Mapping) else None
        if isinstance(floe, Mapping):
            merged.update(floe)
    return merged


def make_feed(
    source: str,
    name: str,
    source_meta: Mapping[str, Any],
    table_meta: Mapping[str, Any],
    columns: Iterable[Mapping[str, Any]] = (),
    description: str = "",
) -> Feed:
    """A validated :class:`Feed` from a source's and a table's ``floe`` meta (table wins)."""
    where = f"sources YAML, source '{source}', table '{name}'"
    check_identifier(source, f"{where}: source name")
    check_identifier(name, f"{where}: table name (it names the raw table raw.<name>)")
    options = {**source_meta, **table_meta}
    kind = options.get("kind")
    if kind not in KINDS:
        raise FeedError(f"{where}: meta.floe.kind must be one of {', '.join(KINDS)}, got {kind!r}")
    module = feed_kind(kind)
    known = COMMON_OPTIONS | module.OPTIONS
    unknown = sorted(set(options) - known)
    if unknown:
        raise FeedError(
            f"{where}: unknown meta.floe option(s) {', '.join(unknown)} for kind {kind}; "
            f"known: {', '.join(sorted(known))}"
        )
    landing = str(options.get("landing") or f"{source}/{name}").format(source=source, name=name)
    posix = PurePosixPath(landing)
    if posix.is_absolute() or ".." in posix.parts or not posix.parts:
        raise FeedError(f"{where}: landing {landing!r} must be a folder inside the landing root")
    cols = tuple(
        Column(
            name=str(c["name"]),
            data_type=str(c.get("data_type") or ""),
            description=str(c.get("description") or ""),
        )
        for c in columns
        if isinstance(c, Mapping) and c.get("name")
    )
    feed = Feed(
        source=source,
        name=name,
        kind=kind,
        landing=posix.as_posix(),
        options={k: v for k, v in options.items() if k not in ("kind", "landing")},
        columns=cols,
        description=str(description or "").strip(),
    )
    module.validate(feed)
    return feed


def feed_from_node(node: Mapping[str, Any]) -> Feed | None:
    """The feed of a dbt source node (manifest / graph dict), or None if it is not a feed."""
    table_meta = _meta({"meta": node.get("meta"), "config": node.get("config")})
    source_meta = _meta({"meta": node.get("source_meta")})
    if "floe" not in (node.get("source_meta") or {}) and not table_meta:
        return None
    columns = node.get("columns") or {}
    return make_feed(
        str(node["source_name"]),
        str(node["name"]),
        source_meta,
        table_meta,
        columns.values() if isinstance(columns, Mapping) else columns,
        str(node.get("description") or ""),
    )


def feed_node(graph: Mapping[str, Any] | None, source: str, name: str) -> dict[str, Any] | None:
    """The declaration of feed ``source.name`` from dbt's graph, validated, as the plain
    dict a raw Python model is handed (``floe_feed_nodes``): None if that source is not
    a feed. A bad declaration raises :class:`FeedError` here, at compile time."""
    for node in ((graph or {}).get("sources") or {}).values():
        if node.get("source_name") != source or node.get("name") != name:
            continue
        if feed_from_node(node) is None:
            return None
        columns = node.get("columns") or {}
        return {
            "source_name": node.get("source_name"),
            "name": node.get("name"),
            "description": node.get("description"),
            "meta": node.get("meta") or {},
            "config": {"meta": (node.get("config") or {}).get("meta") or {}},
            "source_meta": node.get("source_meta") or {},
            "columns": [
                {
                    "name": c.get("name"),
                    "data_type": c.get("data_type"),
                    "description": c.get("description"),
                }
                for c in (columns.values() if isinstance(columns, Mapping) else columns)
            ],
        }
    return None


def _model_paths(project_dir: Path) -> list[Path]:
    config = yaml.safe_load((project_dir / "dbt_project.yml").read_text()) or {}
    return [project_dir / p for p in (config.get("model-paths") or ["models"])]


def load_feeds(project_dir: Path) -> list[Feed]:
    """Every feed declared in the project's YAML, in (source, table) order.

    Disabled feeds (``enabled: false``) are left out. Two feeds with one name fail:
    their raw tables would collide.
    """
    feeds: list[Feed] = []
    for folder in _model_paths(project_dir):
        for path in sorted(folder.rglob("*.yml")) + sorted(folder.rglob("*.yaml")):
            document = yaml.safe_load(path.read_text()) or {}
            for source in document.get("sources") or []:
                source_meta = _meta(source)
                for table in source.get("tables") or []:
                    table_meta = _meta(table)
                    if not source_meta and not table_meta:
                        continue
                    try:
                        feed = make_feed(
                            str(source["name"]),
                            str(table["name"]),
                            source_meta,
                            table_meta,
                            table.get("columns") or [],
                            str(table.get("description") or ""),
                        )
                    except FeedError as exc:
                        raise FeedError(f"{path}: {exc}") from exc
                    if feed.option("enabled", True):
                        feeds.append(feed)
    seen: dict[str, Feed] = {}
    for feed in feeds:
        if feed.name in seen:
            raise FeedError(
                f"feeds {seen[feed.name].id} and {feed.id} would both land in raw.{feed.name}; "
                "rename one of the source tables"
            )
        seen[feed.name] = feed
    return sorted(feeds, key=lambda f: (f.source, f.name))


def find_feed(feeds: Iterable[Feed], name: str) -> Feed:
    """The feed called ``name`` (``<table>`` or ``<source>.<table>``)."""
    matches = [f for f in feeds if name in (f.name, f.id)]
    if not matches:
        raise FeedError(f"no feed {name!r} is declared (see `floe feeds`)")
    return matches[0]
