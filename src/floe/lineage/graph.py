"""The project's column lineage graph, from dbt's artifacts (docs/lineage.md).

:func:`build_graph` reads ``manifest.json`` (compiled SQL, configs, the DAG) and, when
there is one, ``catalog.json`` (the columns tables really have), and computes one edge
per (upstream column -> column) with the transformation on it:

* SQL models and snapshots: :func:`floe.lineage.sql.query_lineage` on the compiled
  SQL, each parent's columns as the schema (``select *`` expands), in DAG order;
  ephemeral models stay nodes of their own (dbt inlines them as ``__dbt__cte__`` CTEs);
* floe's materializations: ``scd2`` adds the surrogate key and validity columns and
  drops ``_scd2_*`` flags; the ``cdc`` strategy drops the op column and ``_``-prefixed
  columns (they only decide which change applies);
* raw feed models (``return dbt.source(feed)``): 1:1 from the feed source's columns
  (declared columns, or the stream's registry fields), the kind's provenance columns
  from the landed files; every feed source from a ``landed`` node (its files);
* other Python models: the ``lineage`` meta of their YAML columns
  (``meta: {lineage: [stg_x.col, ...]}``), else an ``unknown`` edge from each parent.

Nothing is invented: a column the SQL names but nothing resolves, an unparsable model,
a table column the SQL does not produce (schema evolution) get ``unknown`` edges.
"""

from __future__ import annotations

import difflib
import json
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from floe.lineage.feeds import feed_columns
from floe.lineage.sql import INDIRECT_KINDS, LineageParseError, query_lineage

FORMAT_VERSION = 1
UNKNOWN = "unknown"
ANY_COLUMN = "*"  # an unknown edge from some column(s) of a node
LEAF_TYPES = ("source", "seed", "landed")


class LineageError(ValueError):
    """Lineage cannot be built or queried; the message says what to do."""


@dataclass(frozen=True)
class Edge:
    src: tuple[str, str]  # (node id, column)
    dst: tuple[str, str]
    kind: str
    sql: str = ""
    path: tuple[str, ...] = ()  # struct fields read from the source column
    note: str = ""


@dataclass
class Node:
    id: str  # dbt unique_id, or "landed.<source>.<table>"
    name: str  # model name, "<source>.<table>", "landed <path>"
    type: str  # model | source | seed | snapshot | landed
    columns: list[str] = field(default_factory=list)
    materialized: str = ""
    status: str = "ok"  # ok | unparsed | undeclared (Python model) | no_sql
    errors: list[str] = field(default_factory=list)
    layer: str = ""  # raw | staging | intermediate | marts | ... (folder under models/)
    relation: str = ""
    indirect: list[tuple[str, str, str]] = field(default_factory=list)  # (node, column, kind)


@dataclass
class LineageGraph:
    nodes: dict[str, Node]
    edges: list[Edge]
    generated_at: str = ""
    # The environment the graph is shown for (floe.envs.placement, docs/envs.md):
    # {"name", "branch", "tables": {schema.table: "branch" | "main" | "environment only"}}
    env: dict[str, Any] | None = None
    _up: dict[tuple[str, str], list[int]] = field(default_factory=dict, repr=False)
    _down: dict[tuple[str, str], list[int]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._index()

    def _index(self) -> None:
        self._up.clear()
        self._down.clear()
        for i, edge in enumerate(self.edges):
            self._up.setdefault(edge.dst, []).append(i)
            self._down.setdefault(edge.src, []).append(i)
            if edge.src[1] == ANY_COLUMN and edge.src[0] in self.nodes:
                # "some column of X": every column of X reaches it downstream
                for col in self.nodes[edge.src[0]].columns:
                    self._down.setdefault((edge.src[0], col), []).append(i)

    # ------------------------------------------------------------------ lookups
    def find(self, text: str) -> tuple[str, str]:
        """``model.column`` (or ``source.table.column``, or a unique_id + column) -> key."""
        node_part, _, column = text.strip().rpartition(".")
        if not node_part:
            raise LineageError(f"{text!r}: write <model>.<column>, e.g. dim_customer.email_id")
        column = column.lower()
        nodes = [n for n in self.nodes.values() if n.type != "landed"]
        matches = [n for n in nodes if node_part in (n.id, n.name)]
        if not matches:
            matches = [n for n in nodes if n.id.split(".")[-1] == node_part]
        if not matches:
            # the warehouse's spelling: [lake.]marts.dim_customer
            relation = _relation_key(node_part)
            matches = [n for n in nodes if relation and n.relation == relation]
        if not matches:
            known = sorted({n.name for n in nodes})
            close = difflib.get_close_matches(node_part.split(".")[-1], known, n=3)
            hint = f"; did you mean {' or '.join(close)}?" if close else ""
            raise LineageError(
                f"no model, source or seed called {node_part!r} in the lineage{hint}"
            )
        if len(matches) > 1:
            names = ", ".join(sorted(n.id for n in matches))
            raise LineageError(f"{node_part!r} is ambiguous ({names}); use the unique id")
        node = matches[0]
        if column not in node.columns:
            raise LineageError(
                f"{node.name} has no column {column!r}; its columns: {', '.join(node.columns)}"
            )
        return node.id, column

    def upstream_edges(self, key: tuple[str, str]) -> list[Edge]:
        return [self.edges[i] for i in self._up.get(key, [])]

    def downstream_edges(self, key: tuple[str, str]) -> list[Edge]:
        return [self.edges[i] for i in self._down.get(key, [])]

    def walk(self, key: tuple[str, str], downstream: bool = False) -> list[Edge]:
        """Every edge reachable from ``key`` (breadth first, each edge once)."""
        seen: set[int] = set()
        queue = deque([key])
        visited = {key}
        index = self._down if downstream else self._up
        out: list[Edge] = []
        while queue:
            current = queue.popleft()
            for i in index.get(current, []):
                if i in seen:
                    continue
                seen.add(i)
                edge = self.edges[i]
                out.append(edge)
                nxt = edge.dst if downstream else edge.src
                if nxt not in visited and nxt[1] != ANY_COLUMN:
                    visited.add(nxt)
                    queue.append(nxt)
        return out

    def is_complete(self, key: tuple[str, str]) -> bool:
        """Every upstream path of ``key`` is resolved and at least one ends at a source."""
        edges = self.walk(key)
        if any(e.kind == UNKNOWN for e in edges):
            return False
        return any(self.nodes[e.src[0]].type in LEAF_TYPES for e in edges if e.src[0] in self.nodes)

    def placement_of(self, node_id: str) -> str:
        """Where ``node_id`` is read in the graph's environment ("" without one, or for
        what has no table: sources, views, ephemeral models)."""
        node = self.nodes.get(node_id)
        if not self.env or node is None or not node.relation:
            return ""
        return str(self.env.get("tables", {}).get(node.relation, ""))

    # ------------------------------------------------------------------ JSON
    def to_json(self) -> dict[str, Any]:
        ids = list(self.nodes)
        position = {uid: i for i, uid in enumerate(ids)}
        data: dict[str, Any] = {
            "version": FORMAT_VERSION,
            "generated_at": self.generated_at,
            "nodes": [
                {
                    "id": n.id,
                    "name": n.name,
                    "type": n.type,
                    "layer": n.layer,
                    "materialized": n.materialized,
                    "relation": n.relation,
                    "status": n.status,
                    "errors": n.errors,
                    "columns": n.columns,
                    "indirect": [[position[s], c, k] for s, c, k in n.indirect if s in position],
                    **({"env": self.placement_of(n.id)} if self.env else {}),
                }
                for n in (self.nodes[uid] for uid in ids)
            ],
            # [src node, src column, dst node, dst column, kind, sql, path, note]
            "edges": [
                [
                    position[e.src[0]],
                    e.src[1],
                    position[e.dst[0]],
                    e.dst[1],
                    e.kind,
                    e.sql,
                    ".".join(e.path),
                    e.note,
                ]
                for e in self.edges
            ],
        }
        if self.env:
            data["env"] = self.env
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LineageGraph:
        if data.get("version") != FORMAT_VERSION:
            raise LineageError(
                f"lineage.json has format {data.get('version')!r}, expected {FORMAT_VERSION}: "
                "rebuild it with `floe lineage build`"
            )
        raw_nodes = data["nodes"]
        ids = [n["id"] for n in raw_nodes]
        nodes = {}
        for n in raw_nodes:
            nodes[n["id"]] = Node(
                id=n["id"],
                name=n["name"],
                type=n["type"],
                columns=list(n["columns"]),
                materialized=n.get("materialized", ""),
                status=n.get("status", "ok"),
                errors=list(n.get("errors", [])),
                layer=n.get("layer", ""),
                relation=n.get("relation", ""),
                indirect=[(ids[s], c, k) for s, c, k in n.get("indirect", [])],
            )
        edges = [
            Edge(
                (ids[s], sc),
                (ids[d], dc),
                kind,
                sql,
                tuple(p for p in path.split(".") if p),
                note,
            )
            for s, sc, d, dc, kind, sql, path, note in data["edges"]
        ]
        return cls(nodes, edges, data.get("generated_at", ""), data.get("env"))

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_json(), separators=(",", ":")))
        return path

    @classmethod
    def read(cls, path: Path) -> LineageGraph:
        try:
            return cls.from_json(json.loads(path.read_text()))
        except FileNotFoundError as exc:
            raise LineageError(f"{path} does not exist: run `floe lineage build` first") from exc


# ====================================================================== building


def _relation_key(text: str | None) -> str:
    if not text:
        return ""
    parts = [p.strip("`\"' ") for p in str(text).split(".")]
    return ".".join(parts[-2:]).lower()


def _layer(node: Mapping[str, Any]) -> str:
    fqn = node.get("fqn") or []
    return str(fqn[1]) if node.get("resource_type") == "model" and len(fqn) > 2 else ""


def _columns_in(entry: Mapping[str, Any] | None) -> dict[str, str]:
    """Columns of a catalog entry, in table order, lowercase -> type."""
    if not entry:
        return {}
    cols = sorted((entry.get("columns") or {}).values(), key=lambda c: c.get("index") or 0)
    return {str(c["name"]).lower(): str(c.get("type") or "") for c in cols}


def _declared(node: Mapping[str, Any]) -> dict[str, str]:
    return {
        str(name).lower(): str(col.get("data_type") or "")
        for name, col in (node.get("columns") or {}).items()
    }


def _config(node: Mapping[str, Any]) -> Mapping[str, Any]:
    return node.get("config") or {}


def _meta(node: Mapping[str, Any]) -> Mapping[str, Any]:
    return {**(node.get("meta") or {}), **(_config(node).get("meta") or {})}


def _topological(nodes: Mapping[str, Mapping[str, Any]]) -> list[str]:
    order: list[str] = []
    state: dict[str, int] = {}
    for start in sorted(nodes):
        stack: list[tuple[str, Iterator[str]]] = []
        if state.get(start):
            continue
        state[start] = 1
        stack.append((start, iter(_parents(nodes[start]))))
        while stack:
            uid, parents = stack[-1]
            for parent in parents:
                if parent in nodes and not state.get(parent):
                    state[parent] = 1
                    stack.append((parent, iter(_parents(nodes[parent]))))
                    break
            else:
                stack.pop()
                state[uid] = 2
                order.append(uid)
    return order


def _parents(node: Mapping[str, Any]) -> list[str]:
    return list(dict.fromkeys((node.get("depends_on") or {}).get("nodes") or []))


class _Builder:
    def __init__(
        self,
        manifest: Mapping[str, Any],
        catalog: Mapping[str, Any] | None,
        project_dir: Path | None,
    ) -> None:
        self.manifest = manifest
        self.catalog_nodes = {
            **((catalog or {}).get("nodes") or {}),
            **((catalog or {}).get("sources") or {}),
        }
        self.project_dir = project_dir
        self.nodes: dict[str, Node] = {}
        self.edges: list[Edge] = []
        self.types: dict[str, dict[str, str]] = {}  # node id -> column -> type
        self.by_relation: dict[str, str] = {}
        self.feeds: dict[str, Any] = {}  # source uid -> Feed

    # -------------------------------------------------------------- helpers
    def edge(self, src: tuple[str, str], dst: tuple[str, str], kind: str, **extra: Any) -> None:
        self.edges.append(Edge(src, dst, kind, **extra))

    def set_columns(self, uid: str, columns: Mapping[str, str]) -> None:
        self.types[uid] = dict(columns)
        self.nodes[uid].columns = list(columns)

    def build(self) -> LineageGraph:
        manifest = self.manifest
        graph_nodes = {
            uid: n
            for uid, n in manifest.get("nodes", {}).items()
            if n.get("resource_type") in ("model", "seed", "snapshot")
        }
        for uid, source in manifest.get("sources", {}).items():
            self.add_source(uid, source)
        for uid, node in graph_nodes.items():
            relation = _relation_key(node.get("relation_name"))
            ephemeral = _config(node).get("materialized") == "ephemeral"
            if ephemeral:
                relation = f"__dbt__cte__{node['name']}".lower()
            self.nodes[uid] = Node(
                id=uid,
                name=str(node["name"]),
                type=str(node["resource_type"]),
                materialized=str(_config(node).get("materialized") or ""),
                layer=_layer(node),
                relation=relation,
            )
            if relation:
                self.by_relation[relation] = uid
        for uid in _topological(graph_nodes):
            node = graph_nodes[uid]
            try:
                self.add_node(uid, node)
            except LineageParseError as exc:
                self.unparsed(uid, node, str(exc))
        return LineageGraph(
            self.nodes,
            self.edges,
            datetime.now(UTC).replace(microsecond=0).isoformat(),
        )

    # -------------------------------------------------------------- sources
    def add_source(self, uid: str, source: Mapping[str, Any]) -> None:
        from floe.feeds.declarations import FeedError
        from floe.feeds.sources import feed_from_node

        name = f"{source['source_name']}.{source['name']}"
        relation = _relation_key(source.get("relation_name"))
        node = Node(id=uid, name=name, type="source", relation=relation)
        self.nodes[uid] = node
        if relation:
            self.by_relation[relation] = uid
        try:
            feed = feed_from_node(source)
        except FeedError as exc:
            node.errors.append(str(exc))
            feed = None
        columns = _columns_in(self.catalog_nodes.get(uid)) or _declared(source)
        if feed is None:
            self.set_columns(uid, columns)
            return
        self.feeds[uid] = feed
        fields = self.feed_fields(feed, node)
        columns = {**fields, **{c: t for c, t in columns.items() if c not in fields}}
        self.set_columns(uid, columns)
        landed_id = f"landed.{feed.id}"
        provenance = self.provenance(feed)
        self.nodes[landed_id] = Node(
            id=landed_id,
            name=f"landed {feed.landing}/",
            type="landed",
            materialized=feed.kind,
            columns=[*columns, *(p for p in provenance if p not in columns)],
        )
        for col in columns:
            self.edge((landed_id, col), (uid, col), "identity", note="as landed")

    def feed_fields(self, feed: Any, node: Node) -> dict[str, str]:
        columns, errors = feed_columns(feed, self.project_dir)
        node.errors.extend(errors)
        return columns

    def provenance(self, feed: Any) -> list[str]:
        from floe.feeds.kinds import feed_kind

        return [c.lower() for c in feed_kind(feed.kind).provenance_docs(feed)]

    # -------------------------------------------------------------- nodes
    def add_node(self, uid: str, node: Mapping[str, Any]) -> None:
        parents = [p for p in _parents(node) if p in self.nodes]
        language = node.get("language") or "sql"
        feed_parents = [p for p in parents if p in self.feeds]
        if node["resource_type"] == "seed":
            self.set_columns(uid, _columns_in(self.catalog_nodes.get(uid)) or _declared(node))
            return
        if language == "python":
            if len(parents) == 1 and feed_parents:
                self.raw_feed_model(uid, node, feed_parents[0])
            else:
                self.python_model(uid, node, parents)
            return
        sql = node.get("compiled_code")
        if not sql:
            self.nodes[uid].status = "no_sql"
            self.unparsed(uid, node, "not compiled: run `dbt compile` or `dbt docs generate`")
            return
        self.sql_model(uid, node, parents, sql)

    def catalog_columns(self, uid: str) -> dict[str, str]:
        return _columns_in(self.catalog_nodes.get(uid))

    def raw_feed_model(self, uid: str, node: Mapping[str, Any], source_uid: str) -> None:
        feed = self.feeds[source_uid]
        source_columns = self.types.get(source_uid, {})
        provenance = self.provenance(feed)
        columns = self.catalog_columns(uid) or {
            **source_columns,
            **{p: "" for p in provenance if p not in source_columns},
        }
        self.set_columns(uid, columns)
        landed = f"landed.{feed.id}"
        for col in columns:
            if col in source_columns:
                self.edge((source_uid, col), (uid, col), "identity", note="dbt.source()")
            elif col in provenance:
                self.edge((landed, col), (uid, col), "provenance", note=f"{feed.kind} ingest")
            else:
                self.edge(
                    (source_uid, ANY_COLUMN),
                    (uid, col),
                    UNKNOWN,
                    note="not a declared column or provenance column of the feed",
                )

    def python_model(self, uid: str, node: Mapping[str, Any], parents: list[str]) -> None:
        declared = node.get("columns") or {}
        columns = self.catalog_columns(uid) or _declared(node)
        self.set_columns(uid, columns)
        undeclared = False
        lineage_meta = {
            str(name).lower(): {
                **(col.get("meta") or {}),
                **((col.get("config") or {}).get("meta") or {}),
            }.get("lineage")
            for name, col in declared.items()
        }
        for name in columns:
            spec = lineage_meta.get(name)
            if not spec:
                undeclared = True
                for parent in parents:
                    self.edge(
                        (parent, ANY_COLUMN),
                        (uid, name),
                        UNKNOWN,
                        note="Python model: declare meta.lineage on the column",
                    )
                continue
            refs = [spec] if isinstance(spec, str) else list(spec)
            for ref in refs:
                try:
                    self.edge(self.resolve_declared(str(ref)), (uid, name), "expression")
                except LineageError as exc:
                    self.nodes[uid].errors.append(str(exc))
                    self.edge((uid, ANY_COLUMN), (uid, name), UNKNOWN, note=str(exc))
        if undeclared:
            self.nodes[uid].status = "undeclared"

    def resolve_declared(self, text: str) -> tuple[str, str]:
        node_part, _, column = text.rpartition(".")
        for n in self.nodes.values():
            if node_part in (n.name, n.id) and column.lower() in n.columns:
                return n.id, column.lower()
        raise LineageError(f"declared lineage {text!r}: no such <node>.<column>")

    def unparsed(self, uid: str, node: Mapping[str, Any], reason: str) -> None:
        this = self.nodes[uid]
        if this.status == "ok":
            this.status = "unparsed"
        this.errors.append(reason)
        columns = self.catalog_columns(uid) or _declared(node)
        self.set_columns(uid, columns)
        for col in columns:
            for parent in _parents(node):
                if parent in self.nodes:
                    self.edge((parent, ANY_COLUMN), (uid, col), UNKNOWN, note=reason)

    # -------------------------------------------------------------- SQL
    def sql_model(self, uid: str, node: Mapping[str, Any], parents: list[str], sql: str) -> None:
        schema = {
            self.nodes[p].relation: self.types.get(p, {})
            for p in parents
            if self.nodes[p].relation and not self.nodes[p].relation.startswith("__dbt__cte__")
        }
        # An incremental model reads its own table (`{{ this }}` in its filter): its
        # columns let sqlglot resolve that subquery; edges from it are never made.
        own_relation = self.nodes[uid].relation
        own_columns = self.catalog_columns(uid) or _declared(node)
        if own_relation and own_columns:
            schema.setdefault(own_relation, own_columns)
        result = query_lineage(sql, schema)
        this = self.nodes[uid]
        own = this.relation
        columns: dict[str, list[Edge]] = {}
        for name, col in result.columns.items():
            edges: list[Edge] = []
            for ref, kind in sorted(col.refs.items()):
                src = self.by_relation.get(ref.table)
                if src is None or ref.table == own:
                    note = (
                        "reads the model's own table"
                        if ref.table == own
                        else f"{ref.table} is not a dbt node"
                    )
                    edges.append(Edge((uid, ANY_COLUMN), (uid, name), UNKNOWN, note=note))
                    continue
                edges.append(Edge((src, ref.column), (uid, name), kind, col.sql, ref.path))
            for text in col.unknown:
                edges.append(
                    Edge((uid, ANY_COLUMN), (uid, name), UNKNOWN, note=f"unresolved: {text}")
                )
            columns[name.lower()] = edges
        if result.unresolved_star:
            this.errors.append("select * over a relation whose columns are unknown")
        indirect: dict[tuple[str, str], str] = {}
        for ref, kind in result.indirect.items():
            src = self.by_relation.get(ref.table)
            if src is not None and src != uid:
                indirect.setdefault((src, ref.column), kind)
        materialized = _config(node).get("materialized")
        if materialized == "scd2":
            columns = self.scd2(uid, node, columns, indirect)
        elif _config(node).get("incremental_strategy") == "cdc":
            columns = self.cdc(uid, node, columns, indirect)
        elif node["resource_type"] == "snapshot":
            columns = self.snapshot(uid, node, columns)
        actual = self.catalog_columns(uid)
        if actual:
            for name in [c for c in columns if c not in actual]:
                this.errors.append(f"column {name} of the SQL is not in the table")
                del columns[name]
            for name in actual:
                if name not in columns:
                    columns[name] = [
                        Edge(
                            (uid, ANY_COLUMN),
                            (uid, name),
                            UNKNOWN,
                            note="in the table, not in the model's SQL (kept by schema evolution?)",
                        )
                    ]
            ordered = {name: columns[name] for name in actual}
        else:
            ordered = columns
        types = {c: actual.get(c, "") for c in ordered}
        self.set_columns(uid, types)
        for edges in ordered.values():
            self.edges.extend(edges)
        this.indirect = [(s, c, k) for (s, c), k in indirect.items()]
        if any(e.kind == UNKNOWN for edges in ordered.values() for e in edges):
            this.errors.append("some columns have unresolved lineage")

    def scd2(
        self,
        uid: str,
        node: Mapping[str, Any],
        columns: dict[str, list[Edge]],
        indirect: dict[tuple[str, str], str],
    ) -> dict[str, list[Edge]]:
        """floe's scd2: surrogate key + data columns + validity; `_scd2_*` flags only filter."""
        config = _config(node)
        keys = config.get("unique_key") or []
        keys = [keys] if isinstance(keys, str) else list(keys)
        sk = str(config.get("surrogate_key") or "sk").lower()
        valid_from = str(config.get("valid_from") or "valid_from").lower()
        valid_to = str(config.get("valid_to") or "valid_to").lower()
        loads = self.find_model(str(config.get("scd2_loads") or ""))
        out: dict[str, list[Edge]] = {}
        out[sk] = [
            Edge(
                e.src,
                (uid, sk),
                "window",
                "row_number() over (order by " + ", ".join(keys) + ") (scd2 surrogate key)",
            )
            for key in keys
            for e in columns.get(key.lower(), [])
        ]
        for name, edges in columns.items():
            if name == "_scd2_load":
                continue  # which load a row is: the validity below, from scd2_loads
            if name.startswith("_scd2_"):
                for e in edges:
                    if e.kind != UNKNOWN:
                        indirect.setdefault(e.src, "filter")
                continue
            out[name] = edges
        for name, what in ((valid_from, "first day"), (valid_to, "last day")):
            if loads is None:
                out[name] = [
                    Edge((uid, ANY_COLUMN), (uid, name), UNKNOWN, note="scd2_loads model not found")
                ]
                continue
            sql = f"{what} of the version: load_date of the applied load (scd2)"
            out[name] = [Edge((loads, "load_date"), (uid, name), "expression", sql)]
        return out

    def cdc(
        self,
        uid: str,
        node: Mapping[str, Any],
        columns: dict[str, list[Edge]],
        indirect: dict[tuple[str, str], str],
    ) -> dict[str, list[Edge]]:
        """floe's cdc strategy: the op column and `_` columns decide, never reach the table."""
        options = {**(_meta(node).get("cdc") or {}), **(_config(node).get("cdc") or {})}
        op = str(options.get("op_column") or self.cdc_op_column(node)).lower()
        excluded = {str(c).lower() for c in options.get("exclude_columns") or []}
        out: dict[str, list[Edge]] = {}
        for name, edges in columns.items():
            if name == op or name.startswith("_") or name in excluded:
                for e in edges:
                    if e.kind != UNKNOWN:
                        indirect.setdefault(e.src, "filter")
                continue
            out[name] = edges
        return out

    def cdc_op_column(self, node: Mapping[str, Any]) -> str:
        """The preset's op column, from the feed the model replicates (as the macro does)."""
        manifest_nodes = self.manifest.get("nodes", {})
        todo = list(_parents(node))
        seen: set[str] = set()
        while todo:
            uid = todo.pop(0)
            if uid in seen:
                continue
            seen.add(uid)
            if uid in self.feeds:
                feed = self.feeds[uid]
                if feed.kind == "dms":
                    return "Op"
                if feed.kind == "flagged_csv":
                    return "op"
                return str(feed.option("op_column") or "Op")
            parent = manifest_nodes.get(uid)
            if parent and (
                _config(parent).get("materialized") in ("view", "ephemeral")
                or _config(parent).get("schema") == "raw"
            ):
                todo.extend(_parents(parent))
        return "Op"

    def snapshot(
        self, uid: str, node: Mapping[str, Any], columns: dict[str, list[Edge]]
    ) -> dict[str, list[Edge]]:
        """dbt's snapshot meta columns, from its unique_key and updated_at."""
        config = _config(node)
        updated = str(config.get("updated_at") or "").lower()
        key = config.get("unique_key") or []
        keys = [key] if isinstance(key, str) else list(key)
        out = dict(columns)

        def from_columns(names: Iterable[str], target: str, sql: str) -> list[Edge]:
            names = [n for n in names if n]
            if not names:  # the check strategy's times are the run's clock: no column input
                return []
            return [
                Edge(e.src, (uid, target), "expression", sql)
                for n in names
                for e in columns.get(str(n).lower(), [])
            ] or [Edge((uid, ANY_COLUMN), (uid, target), UNKNOWN, note="snapshot meta column")]

        out["dbt_scd_id"] = from_columns([*keys, updated], "dbt_scd_id", "hash of key + updated_at")
        for meta in ("dbt_updated_at", "dbt_valid_from", "dbt_valid_to"):
            out[meta] = from_columns([updated], meta, f"{meta} (snapshot)")
        if "dbt_is_deleted" in out or config.get("hard_deletes") == "new_record":
            # a deletion version: the key's absence from the snapshot's select
            out["dbt_is_deleted"] = from_columns(keys, "dbt_is_deleted", "key absent (snapshot)")
        return out

    def find_model(self, name: str) -> str | None:
        for n in self.nodes.values():
            if n.type == "model" and n.name == name:
                return n.id
        return None


def build_graph(
    manifest: Mapping[str, Any],
    catalog: Mapping[str, Any] | None = None,
    project_dir: Path | None = None,
) -> LineageGraph:
    """The column lineage of every model, snapshot, seed and source of a manifest."""
    return _Builder(manifest, catalog, project_dir).build()


def build_from_target(target: Path, project_dir: Path | None = None) -> LineageGraph:
    """:func:`build_graph` on ``target/manifest.json`` (+ ``catalog.json`` when present)."""
    manifest_path = target / "manifest.json"
    if not manifest_path.exists():
        raise LineageError(
            f"{manifest_path} does not exist: run `dbt compile` or `dbt docs generate` first"
        )
    manifest = json.loads(manifest_path.read_text())
    remember_compiled_sql(manifest, target / COMPILED_MEMO)
    catalog_path = target / "catalog.json"
    catalog = json.loads(catalog_path.read_text()) if catalog_path.exists() else None
    return build_graph(manifest, catalog, project_dir)


# The compiled SQL of every model as of its last compilation, keyed by the model's source
# checksum: a partial `dbt build -s x` writes a manifest whose unselected models carry no
# compiled SQL, and their lineage is the same as when they were last compiled.
COMPILED_MEMO = "lineage_compiled.json"


def remember_compiled_sql(manifest: Mapping[str, Any], memo_path: Path) -> int:
    """Fill in the compiled SQL the manifest lacks from ``memo_path`` (same source
    checksum only), then record the manifest's compiled SQL there. Returns how many
    nodes were filled in."""
    try:
        memo: dict[str, Any] = json.loads(memo_path.read_text())
    except (FileNotFoundError, ValueError):
        memo = {}
    filled = 0
    for uid, node in (manifest.get("nodes") or {}).items():
        checksum = str((node.get("checksum") or {}).get("checksum") or "")
        if node.get("compiled_code"):
            memo[uid] = {"checksum": checksum, "compiled_code": node["compiled_code"]}
        elif checksum and (memo.get(uid) or {}).get("checksum") == checksum:
            node["compiled_code"] = memo[uid]["compiled_code"]
            filled += 1
    memo = {uid: entry for uid, entry in memo.items() if uid in (manifest.get("nodes") or {})}
    memo_path.write_text(json.dumps(memo, separators=(",", ":")))
    return filled


def mart_coverage(graph: LineageGraph, layer: str = "marts") -> tuple[int, int, list[str]]:
    """(complete, total, incomplete column names) over the columns of ``layer`` models."""
    complete, total, missing = 0, 0, []
    for node in graph.nodes.values():
        if node.layer != layer:
            continue
        for col in node.columns:
            total += 1
            if graph.is_complete((node.id, col)):
                complete += 1
            else:
                missing.append(f"{node.name}.{col}")
    return complete, total, missing


__all__ = [
    "INDIRECT_KINDS",
    "Edge",
    "LineageError",
    "LineageGraph",
    "Node",
    "build_from_target",
    "build_graph",
    "mart_coverage",
]
