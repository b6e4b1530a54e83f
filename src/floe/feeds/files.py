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

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

from floe.feeds.declarations import FeedError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

# Hadoop treats these as glob syntax in a path given to a Spark reader.
_GLOB_CHARS = "\\{}[]*?"


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


def list_files(folder: Path, pattern: str) -> list[Path]:
    """Regular files under ``folder`` matching ``pattern``, sorted; hidden files skipped.

    Files being written by the generator (``.name.tmp``) and other dot files are
    not landed yet.
    """
    if not folder.is_dir():
        return []
    return sorted(
        p for p in folder.glob(pattern) if p.is_file() and not p.name.startswith((".", "_"))
    )


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
    return spark.createDataFrame(rows, ddl)


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
