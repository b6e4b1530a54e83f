"""Small helpers shared by tests: the project's declared feeds, snapshots, landed lines."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@lru_cache(maxsize=1)
def project_feeds() -> tuple:
    from floe.feeds import load_feeds

    return tuple(load_feeds(ROOT))


def feed(name: str):
    from floe.feeds import find_feed

    return find_feed(project_feeds(), name)


def feeds_of(kind: str) -> list:
    return [f for f in project_feeds() if f.kind == kind]


def current_snapshot(spark, table: str):
    rows = spark.sql(
        f"select snapshot_id from {table}.snapshots order by committed_at desc limit 1"
    ).collect()
    return rows[0][0] if rows else None


def landed_lines(landing: Path, folder: str) -> dict[str, int]:
    """Ledger key -> non-blank lines of every JSONL file under ``landing/folder``."""
    return {
        p.relative_to(landing).as_posix(): sum(1 for line in p.read_text().splitlines() if line)
        for p in (landing / folder).rglob("*.jsonl")
    }
