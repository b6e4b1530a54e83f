"""Column-level lineage of the dbt project (docs/lineage.md).

* :func:`floe.lineage.sql.query_lineage` — one query's column lineage (sqlglot, Spark);
* :func:`build_graph` / :func:`build_from_target` — the project's graph from dbt's
  ``manifest.json`` (+ ``catalog.json``), floe's materializations and feeds included;
* :class:`LineageGraph` — upstream / downstream walks, JSON (``target/lineage.json``);
* :mod:`floe.lineage.diff` — columns affected by the SQL changed since a git ref;
* :mod:`floe.lineage.cli` — ``floe lineage``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from floe.lineage.graph import (
        Edge,
        LineageError,
        LineageGraph,
        Node,
        build_from_target,
        build_graph,
        mart_coverage,
    )
    from floe.lineage.sql import LineageParseError, query_lineage

# Imported on first use: `floe.lineage.feeds` (used by the docs catalog) stays free of
# sqlglot.
_LAZY = {
    "LineageParseError": "floe.lineage.sql",
    "query_lineage": "floe.lineage.sql",
}


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(importlib.import_module(_LAZY.get(name, "floe.lineage.graph")), name)
    raise AttributeError(f"module 'floe.lineage' has no attribute {name!r}")


__all__ = [
    "Edge",
    "LineageError",
    "LineageGraph",
    "LineageParseError",
    "Node",
    "build_from_target",
    "build_graph",
    "mart_coverage",
    "query_lineage",
]
