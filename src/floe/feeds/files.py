"""Landed files and their identity, computed once, in Python, from the landing root.

A landed file's ledger key is its path relative to the landing root with POSIX
separators (``streams/orders/ingest_year=2022/.../orders-2022070100-0000.jsonl``).
It is never derived by a regex over Spark's URL-encoded ``_metadata.file_path``: a
file name with a space, quote, ``%`` or non-ASCII character, or a landing root that
itself contains ``streams/``, must keep its identity (docs/feeds.md).

Spark reads the files; :func:`with_file_columns` joins each row to its file's key
(and any per-file attributes the kind computed, such as a load date) through the
string Spark knows the file by, after checking that Spark reads exactly the files
floe discovered, so no row can be lost or filed under another file.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

from floe.decode.core import SourceFile, file_change
from floe.feeds.declarations import FeedError
from floe.runtime.frames import local_frame

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

log = logging.getLogger(__name__)

# Hadoop treats these as glob syntax in a path given to a Spark reader.
_GLOB_CHARS = "\\{}[]*?"
# A file's checksum is a sha256 over the sha256 of each block of this size, so Python
# workers that read one file in ranges can checksum it together (floe.decode.core).
CHECKSUM_BLOCK = 8 * 1024 * 1024


@dataclass(frozen=True)
class LandedFile:
    """One landed file: its absolute path, ledger key, size, mtime and kind attributes."""

    path: Path
    key: str
    size: int
    mtime_ns: int
    attrs: Mapping[str, Any] = field(default_factory=dict)

    def attr(self, name: str, default: Any = None) -> Any:
        return self.attrs.get(name, default)


def key_of(landing: Path, path: Path) -> str:
    """The ledger key of ``path``: relative to ``landing``, POSIX separators."""
    try:
        return path.relative_to(landing).as_posix()
    except ValueError:
        raise FeedError(f"{path} is not inside the landing root {landing}") from None


def landed_file(landing: Path, path: Path, **attrs: Any) -> LandedFile:
    """A :class:`LandedFile` for ``path`` (stat taken now)."""
    stat = path.stat()
    return LandedFile(path, key_of(landing, path), stat.st_size, stat.st_mtime_ns, attrs)


def listing_hash(files: Sequence[LandedFile]) -> str:
    """A hash of discovered files: ledger key, size and modification time (ns) of each.

    What a feed's "nothing new" memo keys on besides its raw table (docs/feeds.md,
    "Nothing new"): a new, changed or removed file changes it.
    """
    digest = hashlib.sha256()
    for f in sorted(files, key=lambda f: f.key):
        digest.update(f"{f.key}\0{f.size}\0{f.mtime_ns}\n".encode())
    return digest.hexdigest()


def list_files(folder: Path, pattern: str, root: Path) -> list[Path]:
    """Regular files under ``folder`` matching ``pattern``, sorted; hidden files skipped.

    Files being written by the generator (``.name.tmp``) and other dot files are
    not landed yet. A symbolic link (to a file, or on the way to it) that leads out of
    ``root`` (the landing zone ``folder`` lies in) is not read: the landing zone is what upstream systems may write, nothing else.
    """
    if not folder.is_dir():
        return []
    inside = root.resolve()
    found = []
    for p in folder.glob(pattern):
        if not p.is_file() or p.name.startswith((".", "_")):
            continue
        real = p.resolve()
        if real != p.absolute() and not real.is_relative_to(inside):
            log.warning("%s links to %s, outside the landing zone %s: not read", p, real, inside)
            continue
        found.append(p)
    return sorted(found)


def file_checksum(path: Path) -> str:
    """``sha256x8m:<hex>``: sha256 over the sha256 digest of each 8 MiB block of the file.

    The same value the decode computes from the ranges its workers read.
    """
    digests = []
    with open(path, "rb") as f:
        while True:
            block = f.read(CHECKSUM_BLOCK)
            if not block:
                break
            digests.append(hashlib.sha256(block).digest())
    if not digests:
        digests.append(hashlib.sha256(b"").digest())
    return combine_checksum(digests)


def combine_checksum(digests: Iterable[bytes]) -> str:
    return "sha256x8m:" + hashlib.sha256(b"".join(digests)).hexdigest()


def settled(
    files: Sequence[LandedFile], settle_seconds: float, now: float | None = None
) -> tuple[list[LandedFile], list[LandedFile]]:
    """(files to take now, files that wait for a later build).

    A file waits while it may still be written: younger than ``settle_seconds`` by its
    modification time, or no longer the size / modification time discovery saw.
    """
    now = time.time() if now is None else now
    ready, waiting = [], []
    for f in files:
        young = now - f.mtime_ns / 1e9 < settle_seconds
        if young or changed_since(f) is not None:
            waiting.append(f)
        else:
            ready.append(f)
    if waiting:
        log.info(
            "%d landed file(s) still settling (FLOE_SETTLE_SECONDS=%s), left for a later build: %s",
            len(waiting),
            settle_seconds,
            ", ".join(f.key for f in waiting[:5]),
        )
    return ready, waiting


def changed_since(f: LandedFile) -> str | None:
    """Why ``f`` is not the file discovery saw (size, modification time, gone), or None."""
    return file_change(f.path, f.size, f.mtime_ns, "since it was discovered")


def decode_source(f: LandedFile) -> SourceFile:
    """``f`` as the decode takes it (floe.decode knows no feeds)."""
    return SourceFile(f.path, f.key, f.size, f.mtime_ns, dict(f.attrs))


def spark_path(path: Path) -> str:
    """``path`` as a Spark reader argument: glob characters escaped, so it names one file."""
    text = str(path)
    for char in _GLOB_CHARS:
        text = text.replace(char, "\\" + char)
    return text


def uri_path(uri: str) -> Path:
    """The local path of a ``file:`` URI as Spark/Hadoop print it (percent-decoded)."""
    parsed = urlparse(uri)
    if parsed.scheme not in ("", "file"):
        raise FeedError(f"{uri}: floe reads landed files from the local file system only")
    return Path(os.path.normpath(unquote(parsed.path)))


def file_table(
    spark: SparkSession,
    files: Sequence[LandedFile],
    uris: Iterable[str],
    attrs: Iterable[tuple[str, str]] = (),
) -> DataFrame:
    """``_file_uri``, ``_source_file`` and the named per-file attributes, one row per URI.

    ``uris`` are the strings Spark knows the files by; each is matched to its
    :class:`LandedFile` by path. A URI that is no discovered file, or a discovered file
    Spark does not read, is a bug worth stopping for (rows would be lost or misfiled).
    """
    attrs = list(attrs)
    by_path = {Path(os.path.normpath(f.path)): f for f in files}
    rows, matched = [], set()
    for uri in uris:
        landed = by_path.get(uri_path(uri))
        if landed is None:
            raise FeedError(f"Spark read {uri}, which is not one of the files floe discovered")
        matched.add(landed.key)
        rows.append((uri, landed.key, *(landed.attrs.get(name) for name, _ in attrs)))
    missing = sorted({f.key for f in files} - matched)
    if missing:
        raise FeedError(f"Spark did not list these landed files: {', '.join(missing)}")
    ddl = ", ".join(["_file_uri string", "_source_file string", *(f"{n} {t}" for n, t in attrs)])
    return local_frame(spark, rows, ddl)


def with_file_columns(
    df: DataFrame,
    spark: SparkSession,
    files: Sequence[LandedFile],
    attrs: Iterable[tuple[str, str]] = (),
) -> DataFrame:
    """``df`` (read from ``files`` by a Spark file source) with each row's file key and attributes.

    Spark's own list of the files it reads (``inputFiles()``, no scan) is matched to
    the discovered files first; the join on the URI then gives every row its file.
    """
    from pyspark.sql import functions as F

    table = file_table(spark, files, df.inputFiles(), attrs)
    # input_file_name() is the very string inputFiles() lists (_metadata.file_path spells
    # the scheme differently); a left join keeps a row that matched no file visible as a
    # NULL _source_file, which check_counts turns into an error.
    rows = df.select("*", F.input_file_name().alias("_file_uri"))
    return rows.join(F.broadcast(table), "_file_uri", "left").drop("_file_uri")


def check_counts(counts: Mapping[str | None, Any], what: str) -> None:
    """Per-file counts must not hold rows of no known file (a URI that matched nothing)."""
    if None in counts:
        raise FeedError(
            f"{what}: rows could not be matched to a landed file (Spark and floe disagree on "
            "a file's name); nothing was loaded"
        )
