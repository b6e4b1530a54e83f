"""Impact analysis: the columns affected by the SQL changed since a git ref.

Two compiled manifests — the base (a git ref compiled in a scratch worktree, or the
last main build's ``manifest.json``) and the head (``target/`` of ``dbt compile``, named
like the base: no ``schema_prefix``) — each give a lineage graph (parse only: the same
inputs on both sides). A model whose file changed (dbt's checksum, as
``state:modified.body``) has *changed columns*: added ones, and those whose upstream edges (source column,
transformation, expression) differ; when no column's lineage differs, the change is
in which rows it keeps (a filter, a join), and every column of the model is changed.
The *affected* columns are everything downstream of a changed column (head graph; base
graph for removed columns), which is what a reviewer wants listed on a pull request.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from floe.lineage.graph import LineageGraph, build_graph


class DiffError(RuntimeError):
    """The base or head cannot be compiled or read; the message says what to do."""


@dataclass
class ModelChange:
    name: str
    status: str  # modified | added | removed
    columns: dict[str, str] = field(default_factory=dict)  # column -> why


@dataclass
class DiffResult:
    changes: list[ModelChange]
    affected: dict[str, list[str]]  # model name -> affected columns (downstream)
    layers: dict[str, str]  # model name -> layer

    def to_json(self) -> dict[str, Any]:
        return {
            "changed": [
                {"model": c.name, "status": c.status, "columns": c.columns} for c in self.changes
            ],
            "affected": self.affected,
        }


def _normalized(sql: str | None) -> str:
    return re.sub(r"\s+", " ", sql or "").strip()


def _same_source(before: Mapping[str, Any], after: Mapping[str, Any]) -> bool:
    """Unchanged file, as dbt's state:modified.body sees it (checksum, else raw code)."""
    a, b = before.get("checksum") or {}, after.get("checksum") or {}
    if a.get("checksum") and b.get("checksum"):
        return bool(a["checksum"] == b["checksum"])
    return _normalized(before.get("raw_code")) == _normalized(after.get("raw_code"))


def _fill_compiled(into: dict[str, Any], other: Mapping[str, Any]) -> dict[str, Any]:
    """``into`` with compiled SQL borrowed from ``other`` for unchanged nodes it lacks it for
    (a build compiles only the nodes it selects)."""
    nodes = {}
    for uid, node in into.get("nodes", {}).items():
        twin = other.get("nodes", {}).get(uid)
        if (
            not node.get("compiled_code")
            and twin
            and twin.get("compiled_code")
            and _same_source(node, twin)
        ):
            node = {**node, "compiled_code": twin["compiled_code"]}
        nodes[uid] = node
    return {**into, "nodes": nodes}


def _models(manifest: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {
        uid: n
        for uid, n in manifest.get("nodes", {}).items()
        if n.get("resource_type") in ("model", "snapshot", "seed")
    }


def _signature(graph: LineageGraph, node_id: str, column: str) -> set[tuple[str, ...]]:
    """What a column is computed from, by names (ids differ between projects' copies)."""
    out = set()
    for edge in graph.upstream_edges((node_id, column)):
        src = graph.nodes.get(edge.src[0])
        out.add((src.name if src else edge.src[0], edge.src[1], edge.kind, edge.sql, *edge.path))
    return out


def _indirect(graph: LineageGraph, node_id: str) -> set[tuple[str, str, str]]:
    node = graph.nodes[node_id]
    return {(graph.nodes[s].name if s in graph.nodes else s, c, k) for s, c, k in node.indirect}


def diff_manifests(
    base: Mapping[str, Any],
    head: Mapping[str, Any],
    project_dir: Path | None = None,
    catalog: Mapping[str, Any] | None = None,
) -> DiffResult:
    """Changed models and columns between two manifests, and what they affect downstream.

    ``catalog`` is accepted for symmetry with the CLI but not used: both sides are read
    parse-only so a column added by the change is not mistaken for a missing one.
    """
    del catalog
    base, head = _fill_compiled(dict(base), head), _fill_compiled(dict(head), base)
    base_graph = build_graph(base, None, project_dir)
    head_graph = build_graph(head, None, project_dir)
    base_models, head_models = _models(base), _models(head)
    base_by_name = {str(n["name"]): uid for uid, n in base_models.items()}
    changes: list[ModelChange] = []
    starts_head: list[tuple[str, str]] = []
    starts_base: list[tuple[str, str]] = []
    for uid, node in sorted(head_models.items(), key=lambda kv: str(kv[1]["name"])):
        name = str(node["name"])
        before_uid = base_by_name.get(name)
        head_columns = head_graph.nodes[uid].columns
        if before_uid is None:
            change = ModelChange(name, "added", dict.fromkeys(head_columns, "new model"))
            starts_head += [(uid, c) for c in head_columns]
            changes.append(change)
            continue
        if _same_source(base_models[before_uid], node):
            continue
        change = ModelChange(name, "modified")
        base_columns = base_graph.nodes[before_uid].columns
        for col in head_columns:
            if col not in base_columns:
                change.columns[col] = "added"
            elif _signature(base_graph, before_uid, col) != _signature(head_graph, uid, col):
                change.columns[col] = "expression changed"
        for col in base_columns:
            if col not in head_columns:
                change.columns[col] = "removed"
                starts_base.append((before_uid, col))
        rows_changed = _indirect(base_graph, before_uid) != _indirect(head_graph, uid)
        if rows_changed or not change.columns:
            for col in head_columns:
                change.columns.setdefault(col, "rows changed (filter, join or grouping)")
        starts_head += [(uid, c) for c in head_columns if c in change.columns]
        changes.append(change)
    head_names = {str(n["name"]) for n in head_models.values()}
    for name, uid in sorted(base_by_name.items()):
        if name not in head_names:
            columns = base_graph.nodes[uid].columns
            changes.append(ModelChange(name, "removed", dict.fromkeys(columns, "model removed")))
            starts_base += [(uid, c) for c in columns]
    affected: dict[str, set[str]] = {}
    layers: dict[str, str] = {}
    for graph, starts in ((head_graph, starts_head), (base_graph, starts_base)):
        for start in starts:
            for edge in graph.walk(start, downstream=True):
                reached = graph.nodes[edge.dst[0]]
                affected.setdefault(reached.name, set()).add(edge.dst[1])
                layers[reached.name] = reached.layer
    for change in changes:
        layers.setdefault(change.name, "")
    return DiffResult(
        changes,
        {name: sorted(cols) for name, cols in sorted(affected.items())},
        layers,
    )


def render(result: DiffResult, fmt: str = "text") -> str:
    """The diff as text, Markdown (a pull-request comment) or JSON."""
    if fmt == "json":
        return json.dumps(result.to_json(), indent=2)
    lines: list[str] = []
    md = fmt == "markdown"
    if md:
        lines.append("### Column lineage impact (`floe lineage diff`)")
        lines.append("")
    if not result.changes:
        lines.append("No model's SQL changed.")
        return "\n".join(lines)
    lines.append("Changed models:" if not md else "**Changed models**")
    for change in result.changes:
        cols = ", ".join(f"{c} ({why})" for c, why in sorted(change.columns.items()))
        lines.append(
            f"- {'`' if md else ''}{change.name}{'`' if md else ''} [{change.status}]: {cols}"
        )
    lines.append("")
    if not result.affected:
        lines.append("No downstream column is affected.")
        return "\n".join(lines)
    lines.append("Affected downstream columns:" if not md else "**Affected downstream columns**")
    for name, affected_columns in result.affected.items():
        layer = result.layers.get(name, "")
        tag = f" ({layer})" if layer else ""
        shown = ", ".join(f"`{c}`" if md else c for c in affected_columns)
        lines.append(f"- {'`' if md else ''}{name}{'`' if md else ''}{tag}: {shown}")
    return "\n".join(lines)


def _git(project_dir: Path, *args: str) -> str:
    try:
        done = subprocess.run(
            ["git", "-C", str(project_dir), *args],
            check=True,
            capture_output=True,
            text=True,
        )
    except FileNotFoundError as exc:
        raise DiffError("git is not installed: use --base-manifest instead of --base") from exc
    except subprocess.CalledProcessError as exc:
        raise DiffError(f"git {' '.join(args)} failed: {exc.stderr.strip()}") from exc
    return done.stdout


def compile_ref(project_dir: Path, ref: str) -> dict[str, Any]:
    """``dbt compile`` of the project as of git ``ref`` (a scratch worktree); its manifest."""
    from floe.dbt_runner import run_dbt

    if ref.startswith("-"):
        raise DiffError(f"{ref!r} is not a git ref")
    commit = _git(project_dir, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").strip()
    top = Path(_git(project_dir, "rev-parse", "--show-toplevel").strip())
    scratch = Path(tempfile.mkdtemp(prefix="floe-lineage-base-"))
    tree = scratch / "tree"
    _git(top, "worktree", "add", "--detach", str(tree), commit)
    try:
        sub = project_dir.resolve().relative_to(top.resolve())
        base_project = tree / sub
        target = scratch / "target"
        run = run_dbt(
            ["compile"],
            project=base_project,
            profiles_dir=base_project / "profiles",
            target_path=target,
            quiet=True,
        )
        if not run.success:
            detail = "; ".join(run.failures) or str(run.exception or "see dbt's log")
            raise DiffError(f"dbt compile of {ref} ({commit[:12]}) failed: {detail}")
        return dict(json.loads((target / "manifest.json").read_text()))
    finally:
        _git(top, "worktree", "remove", "--force", str(tree))
        shutil.rmtree(scratch, ignore_errors=True)
