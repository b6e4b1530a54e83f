"""Columns of feed sources (declared, or a stream's registry fields): no SQL parser needed,
so the docs catalog can use it cheaply."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def feed_columns(feed: Any, project_dir: Path | None) -> tuple[dict[str, str], list[str]]:
    """(column -> type, problems) of a feed source: its declared columns, or for a stream
    the top-level fields of its registry schema's latest version (then the declared ones
    that document some of them add nothing)."""
    declared = {c.name.lower(): c.data_type for c in feed.columns}
    if feed.kind != "stream" or project_dir is None:
        return declared, []
    from floe.feeds.declarations import FeedError
    from floe.feeds.kinds.stream import latest_schema

    try:
        data_format, text = latest_schema(feed, project_dir)
    except FeedError as exc:
        return declared, [str(exc)]
    schema = json.loads(text)
    if data_format == "AVRO":
        fields = {str(f["name"]).lower(): _avro_type(f.get("type")) for f in schema["fields"]}
    else:
        props = schema.get("properties") or {}
        fields = {str(n).lower(): _json_type(p) for n, p in props.items()}
    return {**fields, **{c: t for c, t in declared.items() if c not in fields}}, []


def _json_type(prop: Any) -> str:
    kind = (prop or {}).get("type") if isinstance(prop, Mapping) else None
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "")
    return {"integer": "bigint", "number": "double", "object": "struct", "array": "array"}.get(
        str(kind or ""), str(kind or "")
    )


def _avro_type(value: Any) -> str:
    if isinstance(value, list):
        named = [v for v in value if v != "null"]
        return _avro_type(named[0]) if len(named) == 1 else "union"
    if isinstance(value, dict):
        return str(value.get("logicalType") or value.get("type") or "")
    return {"long": "bigint"}.get(str(value or ""), str(value or ""))
