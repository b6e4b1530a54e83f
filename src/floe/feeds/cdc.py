"""A cdc model's config: its own options, defaulted from the feed it replicates.

The feed is found by the one graph walk (:func:`floe.materialize.graph.read_nodes`,
through views, ephemerals and raw feed models) and read by the one feed reader
(:func:`floe.feeds.sources.feed_from_node`, which validates it); its key, partitioning
and preset (:mod:`floe.feeds.kinds.cdc`) are what the model defaults to, so a table's
key and partitioning are declared once, on the feed (docs/cdc.md, docs/feeds.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from floe.feeds.declarations import Feed, FeedError
from floe.feeds.kinds.cdc import PRESETS, feed_preset
from floe.feeds.sources import feed_from_node
from floe.materialize.configs import CdcConfig, ModelConfigError
from floe.materialize.graph import depends_on, read_nodes


def upstream_feed(graph: Mapping[str, Any] | None, node: Any) -> Feed | None:
    """The one feed ``node`` reads through views, ephemerals and raw models, else None
    (no feed, or several: then the model declares its own key)."""
    if not graph:
        return None
    feeds = [
        feed
        for found in read_nodes(graph, depends_on(node), through_raw=True)
        if (found.get("resource_type") == "source" or "source_name" in found)
        and (feed := feed_from_node(found)) is not None
    ]
    return feeds[0] if len(feeds) == 1 else None


def cdc_config(
    model: str,
    options: Mapping[str, Any] | None,
    *,
    unique_key: Any,
    partition_by: Any,
    feed: Feed | None,
) -> CdcConfig:
    """The cdc config of ``model``: ``options`` (its ``cdc`` option) over its preset;
    the model's unique_key / partition_by, else ``feed``'s key / partition_by."""
    if feed is not None:
        unique_key = unique_key or (list(feed.key) or None)
        partition_by = partition_by or feed.option("partition_by")
    return CdcConfig.from_options(
        model,
        options or {},
        PRESETS,
        unique_key=unique_key,
        partition_by=partition_by,
        feed=feed.id if feed is not None else None,
        feed_preset=feed_preset(feed) if feed is not None else None,
    )


def model_cdc_config(
    model: str,
    options: Mapping[str, Any] | None,
    *,
    unique_key: Any,
    partition_by: Any,
    node: Any,
    graph: Mapping[str, Any] | None,
) -> CdcConfig:
    """:func:`cdc_config` with the feed found from ``node`` in ``graph`` (None: no graph,
    as at parse time); a bad feed declaration fails naming the model too."""
    try:
        feed = upstream_feed(graph, node) if node is not None else None
    except FeedError as exc:
        raise ModelConfigError(f"Model {model}: the feed it replicates: {exc}") from exc
    return cdc_config(model, options, unique_key=unique_key, partition_by=partition_by, feed=feed)
