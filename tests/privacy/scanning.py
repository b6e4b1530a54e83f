"""Find a data subject in files by decoding values (not grepping bytes).

Every Parquet file under a warehouse is read with pyarrow; every value of every
column (struct fields and list elements included) is checked: a subject-key column
holding the subject id (clear, or masked as the masked twins store it), and any
string or binary value containing one of the subject's marker strings — also after
base64-decoding it (raw.quarantine keeps the landed, base64-framed record).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

KEY_COLUMNS = {"customer_id", "customerid"}


def _leaves(name: str, array: Any) -> Iterator[tuple[str, Any]]:
    import pyarrow as pa

    t = array.type
    if pa.types.is_struct(t):
        for i in range(t.num_fields):
            yield from _leaves(t.field(i).name, array.field(i))
    elif pa.types.is_list(t) or pa.types.is_large_list(t):
        yield from _leaves(name, array.flatten())
    elif pa.types.is_map(t):
        yield from _leaves(name, array.keys)
        yield from _leaves(name, array.items)
    else:
        yield name, array


def _texts(value: Any) -> Iterable[bytes]:
    if isinstance(value, str):
        yield value.encode()
        raw: bytes | None = None
        if len(value) >= 16:
            try:
                raw = base64.b64decode(value, validate=True)
            except (binascii.Error, ValueError):
                raw = None
        if raw:
            yield raw
    elif isinstance(value, bytes | bytearray):
        yield bytes(value)


def local_path(root: str | Path) -> Path:
    """A warehouse location (``file:///...`` or a path) as a local path."""
    text = str(root)
    return Path(text[len("file://") :] if text.startswith("file://") else text)


def find_subject(
    root: str | Path, key_values: set[Any], markers: Iterable[str]
) -> list[tuple[str, str, Any]]:
    """(file, column, value) of every hit under ``root`` (every ``*.parquet`` file)."""
    import pyarrow.parquet as pq

    needles = [m.encode() for m in markers]
    hits = []
    for path in sorted(local_path(root).rglob("*.parquet")):
        table = pq.read_table(path)
        for column in table.column_names:
            for chunk in table.column(column).chunks:
                for leaf, array in _leaves(column, chunk):
                    is_key = leaf.lower() in KEY_COLUMNS
                    for value in array.to_pylist():
                        if value is None:
                            continue
                        if is_key and (value in key_values or str(value) in key_values):
                            hits.append((str(path), leaf, value))
                            continue
                        if any(n in t for t in _texts(value) for n in needles):
                            hits.append((str(path), leaf, value))
    return hits


def parquet_files(root: str | Path) -> int:
    return sum(1 for _ in local_path(root).rglob("*.parquet"))
