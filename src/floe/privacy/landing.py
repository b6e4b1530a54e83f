"""Landed files that hold a data subject: find them, and rewrite them without it.

The landing zone is upstream's immutable record (docs/feeds.md): floe reads it, never
changes it — except here, on an erasure run with ``--include-landing``, because a
landed file that still holds an erased subject would bring the subject back on a full
refresh. Every other record stays byte for byte as it was (JSONL and CSV: the same
bytes; Parquet: the same values), the rewrite is atomic (a temporary file beside it,
then a rename), and the erasure log records the file's checksum before and after.

Records are recognised by decoding them (floe.privacy.matcher for stream envelopes;
the declared column for CSV and Parquet), never by searching bytes.
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from floe.privacy.masking import as_text

if TYPE_CHECKING:
    from floe.feeds.declarations import Feed
    from floe.privacy.matcher import RecordMatcher


@dataclass(frozen=True)
class LandedHit:
    """A landed file holding ``records`` records of the subject."""

    feed: str
    key: str  # ledger key: the path relative to the landing root
    path: Path
    records: int
    sha256: str


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# --------------------------------------------------------------------------- record splitting


def jsonl_records(data: bytes) -> Iterator[bytes]:
    """Lines with their endings (the last may lack one)."""
    yield from data.splitlines(keepends=True)


def csv_records(data: bytes) -> Iterator[bytes]:
    """CSV records with their line endings; a quoted field may span lines."""
    start, quoted = 0, False
    for i, byte in enumerate(data):
        if byte == 0x22:  # '"' (doubled quotes toggle twice: still right)
            quoted = not quoted
        elif byte == 0x0A and not quoted:
            yield data[start : i + 1]
            start = i + 1
    if start < len(data):
        yield data[start:]


def csv_fields(record: bytes) -> list[str]:
    rows = list(csv.reader(io.StringIO(record.decode("utf-8"))))
    return rows[0] if rows else []


# --------------------------------------------------------------------------- per kind


@dataclass(frozen=True)
class FileSpec:
    """How to tell a subject's records in one landed file."""

    split: Callable[[bytes], Iterator[bytes]]
    is_subject: Callable[[bytes, int], bool]  # (record, index) -> belongs to the subject
    keeps_first: bool = False  # a header record, never removed


def _csv_spec(
    value: str, columns: Sequence[str] | None = None, positions: Sequence[int] = ()
) -> FileSpec:
    """CSV records: the subject's columns found by name in the header (``columns``), or
    at fixed ``positions`` in a file without one."""
    header = columns is not None
    wanted = {c.lower() for c in columns or ()}
    needle = value.encode("utf-8")
    found = list(positions)

    def is_subject(record: bytes, index: int) -> bool:
        nonlocal found
        if header and index == 0:
            found = [i for i, h in enumerate(csv_fields(record)) if h.strip().lower() in wanted]
            return False
        if needle not in record:  # cheap pre-check; the parsed fields decide
            return False
        fields = csv_fields(record)
        return any(p < len(fields) and fields[p].strip() == value for p in found)

    return FileSpec(csv_records, is_subject, keeps_first=header)


def file_spec(
    feed: Feed, path: Path, columns: Sequence[str], value: str, matcher: RecordMatcher | None
) -> FileSpec | None:
    """The record rules of ``path`` of ``feed`` (None for Parquet: rewritten as a table)."""
    if feed.kind == "stream":
        if matcher is None:
            raise ValueError(f"feed {feed.id}: a stream needs a record matcher")
        m = matcher

        def is_subject(record: bytes, _index: int) -> bool:
            return m.matches_line(record.decode("utf-8", "replace"))

        return FileSpec(jsonl_records, is_subject)
    if feed.kind == "dms":
        return None
    if feed.kind == "flagged_csv" and path.parent.name == "cdc":
        # no header: the op flag, then the declared columns
        declared = [c.name.lower() for c in feed.columns]
        wanted = [c.lower() for c in columns]
        return _csv_spec(value, positions=[1 + i for i, c in enumerate(declared) if c in wanted])
    return _csv_spec(value, columns=columns)


def scan_file(
    feed: Feed, path: Path, columns: Sequence[str], value: str, matcher: RecordMatcher | None
) -> int:
    """How many records of the subject ``path`` holds."""
    spec = file_spec(feed, path, columns, value, matcher)
    if spec is None:
        return len(_parquet_rows(path, columns, value)[1])
    data = path.read_bytes()
    return sum(1 for i, rec in enumerate(spec.split(data)) if spec.is_subject(rec, i))


def _parquet_rows(path: Path, columns: Sequence[str], value: str) -> tuple[Any, list[int]]:
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    names = {n.lower(): n for n in table.column_names}
    hits: set[int] = set()
    for column in columns:
        name = names.get(column.lower())
        if name is None:
            continue
        for i, cell in enumerate(table.column(name).to_pylist()):
            if cell is not None and as_text(cell) == value:
                hits.add(i)
    return table, sorted(hits)


def rewrite_file(
    feed: Feed, path: Path, columns: Sequence[str], value: str, matcher: RecordMatcher | None
) -> int:
    """Rewrite ``path`` without the subject's records (atomically); returns how many
    records were removed (0: the file is left untouched)."""
    spec = file_spec(feed, path, columns, value, matcher)
    if spec is None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        table, hits = _parquet_rows(path, columns, value)
        if not hits:
            return 0
        keep = pa.array([i not in set(hits) for i in range(table.num_rows)])
        buffer = io.BytesIO()
        pq.write_table(table.filter(keep), buffer)
        _replace(path, buffer.getvalue())
        return len(hits)
    data = path.read_bytes()
    kept, removed = [], 0
    for i, record in enumerate(spec.split(data)):
        if spec.is_subject(record, i):
            removed += 1
        else:
            kept.append(record)
    if removed:
        _replace(path, b"".join(kept))
    return removed


def _replace(path: Path, body: bytes) -> None:
    """Write ``body`` to a hidden file beside ``path`` (floe skips dot files), fsync, rename."""
    temp = path.with_name(f".{path.name}.floe-erasure.tmp")
    mode = path.stat().st_mode & 0o777
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "wb") as handle:
        handle.write(body)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temp, path)
