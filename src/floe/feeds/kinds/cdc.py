"""CDC presets: how each change format marks operations and orders changes (docs/cdc.md).

A cdc model (``incremental_strategy: cdc``) applies a replicated feed's changes with one
of these presets. Which one a feed implies is decided here, beside the kinds that land
the changes: a ``dms`` feed's files carry DMS's ``Op`` column, a ``flagged_csv`` feed's
an ``op`` flag, and a feed whose ``op_column`` is ``__op`` is a Debezium change stream.
"""

from __future__ import annotations

from floe.feeds.declarations import Feed
from floe.materialize.configs import CdcPreset

PRESETS: dict[str, CdcPreset] = {
    "dms": CdcPreset(
        op_column="Op",
        delete_ops=("D",),
        upsert_ops=("I", "U"),
        null_op="upsert",  # a DMS full load carries no op
        delete_condition=None,
        order_by=("last_update_time", "_source_file", "_row_in_file"),
    ),
    "debezium": CdcPreset(
        op_column="__op",
        delete_ops=("d",),
        upsert_ops=("c", "u", "r"),
        null_op="fail",
        delete_condition="lower(cast(__deleted as string)) = 'true'",
        order_by=("__source_ts_ms", "_source_file", "_row_in_file"),
    ),
    "flag": CdcPreset(
        op_column="op",
        delete_ops=("D",),
        upsert_ops=("I", "U"),
        null_op="upsert",
        delete_condition=None,
        order_by=("_load_date", "_source_file", "_row_in_file"),
    ),
}

# Feed kind -> the preset its landed changes follow.
KIND_PRESETS: dict[str, str] = {"dms": "dms", "flagged_csv": "flag"}
# An op column that names the format whatever the kind (e.g. a stream of Debezium events).
OP_COLUMN_PRESETS: dict[str, str] = {"__op": "debezium"}


def preset_for(kind: str | None, op_column: str | None = None) -> str | None:
    """The preset a feed of ``kind`` with ``op_column`` implies, or None (the model says)."""
    if kind in KIND_PRESETS:
        return KIND_PRESETS[kind]
    return OP_COLUMN_PRESETS.get(op_column or "")


def feed_preset(feed: Feed) -> str | None:
    """The preset feed ``feed`` implies, or None."""
    return preset_for(feed.kind, feed.option("op_column"))
