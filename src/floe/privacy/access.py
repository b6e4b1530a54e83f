"""Reading marts as an analyst: sensitive and private columns masked (docs/privacy.md).

:class:`MaskedReader` reads a table through pyiceberg (no Spark) and masks every
column an analyst must not see in clear, by its tags: ``masking`` when declared,
else ``encrypt`` for a subject key (it still joins) and ``hash`` for any other
``sensitive`` or ``private`` column — exactly what the ``privacy_masked_columns``
macro does for the masked marts (``marts.*_masked``) that the Spark SQL side reads.
Columns a masked twin already stores masked are passed through; untagged columns
are treated as public (``floe privacy scan`` fails CI on untagged personal data in
marts). A struct column with tagged personal fields is masked whole.

    reader = MaskedReader.open(settings)
    table = reader.read("marts.fct_customer_purchases", limit=100)   # a pyarrow.Table
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from floe.privacy.masking import Masking
from floe.privacy.tags import PrivacyTags, RelationTags

if TYPE_CHECKING:
    import pyarrow as pa

    from floe.privacy.secrets import Secrets
    from floe.runtime import Settings


def column_exposure(rel: RelationTags | None, column: str) -> Masking | None:
    """How an analyst sees top-level ``column`` of ``rel``: a masking, or None (clear)."""
    if rel is None:
        return None
    tag = rel.tag(column)
    if tag is not None:
        if tag.stored is not None:
            return None  # already stored masked (a masked twin)
        return tag.exposure()
    nested = [t for key, t in rel.columns.items() if key.startswith(column.lower() + ".")]
    if any(t.exposure() is not None for t in nested):
        return Masking("hash")
    return None


@dataclass
class MaskedReader:
    """pyiceberg reads with analyst masking (see the module docstring)."""

    catalog: Any
    tags: PrivacyTags
    secrets: Secrets

    @classmethod
    def open(cls, settings: Settings, manifest: Path | None = None) -> MaskedReader:
        from floe.privacy.secrets import load_secrets
        from floe.privacy.tags import load_tags
        from floe.runtime import open_catalog

        s = settings
        return cls(open_catalog(s), load_tags(s, manifest), load_secrets(s))

    def masked_columns(self, table: str, names: list[str]) -> dict[str, Masking]:
        rel = self.tags.get(table)
        out = {}
        for name in names:
            masking = column_exposure(rel, name)
            if masking is not None:
                out[name] = masking
        return out

    def read(
        self,
        table: str,
        *,
        columns: list[str] | None = None,
        row_filter: str | None = None,
        limit: int | None = None,
    ) -> pa.Table:
        """``table`` (``schema.name``) as Arrow, masked for an analyst. ``row_filter`` is a
        pyiceberg filter expression; it may not name a masked column (filtering on clear
        values would tell whether a person is there)."""
        iceberg = self.catalog.load_table(tuple(table.split(".")))
        if row_filter:
            names = [f.name for f in iceberg.schema().fields]
            masked = self.masked_columns(table, names)
            named = [n for n in masked if re.search(rf"\b{re.escape(n)}\b", row_filter, re.I)]
            if named:
                raise PermissionError(
                    f"row_filter names masked column(s) {', '.join(named)} of {table}: an "
                    "analyst filters on unmasked columns only"
                )
        scan_args: dict[str, Any] = {}
        if columns:
            scan_args["selected_fields"] = tuple(columns)
        if row_filter:
            scan_args["row_filter"] = row_filter
        if limit is not None:
            scan_args["limit"] = limit
        arrow = iceberg.scan(**scan_args).to_arrow()
        return mask_arrow(arrow, self.masked_columns(table, arrow.column_names), self.secrets)


def mask_arrow(arrow: pa.Table, masked: dict[str, Masking], secrets: Secrets) -> pa.Table:
    """``arrow`` with the ``masked`` columns replaced by their masked text."""
    import pyarrow as pa

    for name, masking in masked.items():
        index = arrow.column_names.index(name)
        values = [masking.apply(v, secrets) for v in arrow.column(name).to_pylist()]
        arrow = arrow.set_column(index, pa.field(name, pa.string()), pa.array(values, pa.string()))
    return arrow
