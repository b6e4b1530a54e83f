"""Subject keys follow column lineage to every table that copies them (docs/privacy.md).

A feed's YAML tags the column that identifies a person (``subject_key: rider_id``);
the staging views, intermediate tables and marts built from it rarely repeat the tag.
:func:`follow_subject_keys` walks floe's column lineage (floe.lineage) downstream from
every tagged subject column and tags each column that holds the *same value* — reached
only through ``identity``, ``rename``, ``cast`` or (for a tagged struct field) ``field``
edges — with the same subject key, recording where it came from (``ColumnTag.via``).
An ``expression``, ``aggregate``, ``window`` or ``explode`` step is not followed: its
column no longer holds the key's value, so an equality on it would find nothing.

A tag written in a column's own YAML always wins over a followed one. Masked twins
inherit the followed tags of the relation they mask, stored masked, as they inherit
written ones.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from floe.privacy.tags import ColumnTag, PrivacyTags, RelationTags

if TYPE_CHECKING:
    from floe.lineage.graph import Edge, LineageGraph

# Edge kinds whose destination column holds the source column's value unchanged.
VALUE_KINDS = ("identity", "rename", "cast")
# Node types that are stored relations the erasure can search.
_STORED = ("model", "snapshot", "seed")


@dataclass(frozen=True)
class Followed:
    """One column tagged through lineage."""

    relation: str
    column: str
    subject_key: str
    origin: str  # relation.column of the written tag


def lineage_for_manifest(manifest: Mapping[str, Any], project_dir: Path) -> LineageGraph:
    """The column lineage of a manifest (``dbt parse``'s has no compiled SQL: the
    compiled SQL remembered in ``target/lineage_compiled.json`` fills it in for models
    unchanged since they were last compiled, as ``floe lineage build`` does — read
    only: a privacy command leaves the memo as it is)."""
    from floe.lineage.graph import COMPILED_MEMO, build_graph

    nodes = {uid: dict(node) for uid, node in (manifest.get("nodes") or {}).items()}
    try:
        memo = json.loads((project_dir / "target" / COMPILED_MEMO).read_text())
    except (OSError, ValueError):
        memo = {}
    for uid, node in nodes.items():
        entry = memo.get(uid) if isinstance(memo, dict) else None
        checksum = str((node.get("checksum") or {}).get("checksum") or "")
        if not node.get("compiled_code") and entry and checksum == entry.get("checksum"):
            node["compiled_code"] = entry.get("compiled_code")
    return build_graph({**manifest, "nodes": nodes}, None, project_dir)


def _starts(graph: LineageGraph, rel: RelationTags) -> list[str]:
    """Lineage nodes standing for a tagged relation: its model(s), or its source."""
    return [
        node.id
        for node in graph.nodes.values()
        if node.id == rel.node_id or (node.relation == rel.relation and node.type != "landed")
    ]


def _carries(edge: Edge, field_path: tuple[str, ...]) -> tuple[bool, tuple[str, ...]]:
    """(does ``edge`` carry the tagged value, the field path still to read after it)."""
    if field_path:
        # the tag is on a struct field: only an edge that reads that field carries it
        if edge.kind == "field" and edge.path[: len(field_path)] == field_path:
            return True, ()
        if edge.kind in VALUE_KINDS and not edge.path:
            return True, field_path  # the whole struct moved on
        return False, ()
    return edge.kind in VALUE_KINDS and not edge.path, ()


def follow_subject_keys(tags: PrivacyTags, graph: LineageGraph) -> list[Followed]:
    """Tag (in ``tags``) every stored column that carries a tagged subject key's value
    downstream in ``graph``; returns what was added, sorted."""
    seeds: list[tuple[tuple[str, str], tuple[str, ...], ColumnTag, str]] = []
    for name, rel in sorted(tags.relations.items()):
        if rel.masked_of is not None:
            continue  # a twin's values are masked: nothing downstream holds the clear key
        for tag in rel.columns.values():
            if tag.subject_key is None or tag.via:
                continue
            top, *rest_path = tag.path.lower().split(".")
            for node_id in _starts(graph, rel):
                seeds.append(((node_id, top), tuple(rest_path), tag, f"{name}.{tag.path}"))
    added: dict[tuple[str, str], Followed] = {}
    for start, field_path, tag, origin in seeds:
        queue: deque[tuple[tuple[str, str], tuple[str, ...]]] = deque([(start, field_path)])
        seen = {(start, field_path)}
        while queue:
            key, path = queue.popleft()
            for edge in graph.downstream_edges(key):
                carried, rest = _carries(edge, path)
                if not carried or (edge.dst, rest) in seen:
                    continue
                seen.add((edge.dst, rest))
                queue.append((edge.dst, rest))
                node = graph.nodes.get(edge.dst[0])
                if (
                    node is None
                    or node.type not in _STORED
                    or not node.relation
                    or node.materialized == "ephemeral"  # inlined: stores nothing
                ):
                    continue
                column = ".".join((edge.dst[1], *rest))
                _tag(tags, node.relation, node.id, column, tag, origin, added)
    for rel in tags.relations.values():
        if rel.masked_of is not None and rel.masked_of in tags.relations:
            tags._mask_twin(rel.relation, rel.masked_of)
    return sorted(added.values(), key=lambda f: (f.relation, f.column))


def _tag(
    tags: PrivacyTags,
    relation: str,
    node_id: str,
    column: str,
    origin_tag: ColumnTag,
    origin: str,
    added: dict[tuple[str, str], Followed],
) -> None:
    rel = tags.relations.get(relation)
    if rel is None:
        rel = tags.relations[relation] = RelationTags(relation, node_id, "model")
    if rel.masked_of is not None or column.lower() in rel.columns:
        return  # a written tag wins; a twin gets its tags from the relation it masks
    rel.columns[column.lower()] = replace(
        origin_tag,
        path=column,
        masking=None,
        stored=None,
        not_pii=False,
        where=f"{relation}.{column} (lineage from {origin})",
        via=origin,
    )
    added[(relation, column.lower())] = Followed(
        relation, column, str(origin_tag.subject_key), origin
    )


def load_tags_followed(
    settings: Any, manifest: Path | None = None
) -> tuple[PrivacyTags, list[Followed]]:
    """The project's privacy tags (floe.privacy.tags.load_tags) with subject keys
    followed through column lineage (:func:`follow_subject_keys`)."""
    from floe.privacy.tags import load_manifest

    data = load_manifest(settings, manifest)
    tags = PrivacyTags.from_manifest(data)
    project_dir = settings.dbt_project_dir()
    graph = lineage_for_manifest(data, project_dir)
    return tags, follow_subject_keys(tags, graph)
