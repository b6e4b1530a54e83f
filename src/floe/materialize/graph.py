"""The one walk of dbt's graph from a model to what it really reads.

A model's ``depends_on`` names views and ephemerals that are no data of their own: what
a model reads is found by walking through them to the tables and sources underneath.
Two readers need that walk and share this one:

* the skip of an unchanged ``table`` model (its input fingerprint: the tables it reads,
  ``table/skip_unchanged.sql``) stops at raw feed models, which are tables;
* the feed a cdc model replicates (:func:`floe.feeds.cdc.upstream_feed`) walks through
  raw feed models too, to the feed source each one reads (docs/feeds.md).

``graph`` is dbt's Jinja ``graph`` (or a manifest's ``nodes`` / ``sources``): plain
mappings, no dbt import.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any


def _get(node: Any, key: str) -> Any:
    return node.get(key) if isinstance(node, Mapping) else getattr(node, key, None)


def _passes_through(node: Any, through_raw: bool) -> bool:
    config = _get(node, "config") or {}
    materialized = _get(config, "materialized")
    if materialized in ("view", "ephemeral"):
        return True
    return (
        through_raw and _get(node, "resource_type") == "model" and _get(config, "schema") == "raw"
    )


def read_nodes(
    graph: Mapping[str, Any], start: Iterable[str], *, through_raw: bool = False
) -> list[Mapping[str, Any]]:
    """The nodes under the unique ids ``start``, through views and ephemerals (and raw
    feed models when ``through_raw``), breadth first: sources and every other node
    (tables, incrementals, seeds, snapshots), each once."""
    sources = _get(graph, "sources") or {}
    nodes = _get(graph, "nodes") or {}
    found: list[Mapping[str, Any]] = []
    seen: set[str] = set()
    todo = list(start)
    while todo:
        uid = todo.pop(0)
        if uid in seen:
            continue
        seen.add(uid)
        node = nodes.get(uid) or sources.get(uid)
        if node is None:
            continue
        if _get(node, "resource_type") != "source" and _passes_through(node, through_raw):
            todo.extend(_get(_get(node, "depends_on") or {}, "nodes") or [])
        else:
            found.append(node)
    return found


def depends_on(node: Any) -> list[str]:
    """The unique ids a model node depends on."""
    return list(_get(_get(node, "depends_on") or {}, "nodes") or [])


def relation_name(node: Any) -> str:
    """``schema.identifier`` of a source or a model/seed/snapshot node."""
    if _get(node, "resource_type") == "source":
        return f"{_get(node, 'schema')}.{_get(node, 'identifier')}"
    return f"{_get(node, 'schema')}.{_get(node, 'alias') or _get(node, 'name')}"


def upstream_tables(
    graph: Mapping[str, Any],
    node: Any,
    read_from: Callable[[Mapping[str, Any]], str | None] | None = None,
) -> list[str]:
    """``schema.identifier`` of every table and source ``node`` reads, sorted, each once.

    ``read_from`` names where a read of a node really goes when that is not the node's
    own relation: under ``dbt --defer``, an unselected node that was not built here is
    read from the state manifest's relation (``defer_relation``), as dbt's ``ref()``
    resolves it; ``None`` keeps the node's own name.
    """
    tables = set()
    for found in read_nodes(graph, depends_on(node)):
        tables.add((read_from(found) if read_from else None) or relation_name(found))
    return sorted(tables)
