"""Shared plumbing of the landing-zone generator: deterministic, append-only writes."""

from __future__ import annotations

import hashlib
import json
import os
import random
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

from floe.runtime.settings import Settings, find_dbt_project

# Below this --scale a feed takes well under a second and a process costs more than it
# saves; at and above it ``floe generate`` writes one feed per core by default.
PARALLEL_SCALE = 50_000


def default_jobs(scale: int) -> int:
    """Processes ``floe generate``/``floe build`` use at ``scale``: one per usable core for
    large demos, one otherwise."""
    return max(1, len(os.sched_getaffinity(0))) if scale >= PARALLEL_SCALE else 1


class LandingConflictError(RuntimeError):
    """A landed file exists with other content; landed files are never modified."""


@dataclass(frozen=True)
class GenerateOptions:
    """What to generate, and where: the landing root, and the dbt project whose feeds and
    ``schemas/`` are drawn from (default: the one found above the working directory)."""

    landing: Path
    days: int = 3
    scale: int = 1000
    seed: int = 42
    start: date = date(2022, 7, 1)
    bad_share: float = 0.01
    project_dir: Path | None = None
    # Engine state whose local registry the stream writer syncs (None: a scratch folder).
    state_dir: Path | None = None
    # Processes writing feeds side by side (each feed's bytes depend only on the feed and
    # the options, so the landing is the same for any value; docs/feeds.md).
    jobs: int = 1

    @classmethod
    def for_settings(cls, settings: Settings, **options: object) -> GenerateOptions:
        """Options on the lakehouse of ``settings`` (landing, project, state)."""
        return cls(
            landing=settings.landing,
            project_dir=settings.dbt_project_dir(),
            state_dir=settings.state_dir,
            **options,  # type: ignore[arg-type]
        )

    def project(self) -> Path:
        return self.project_dir or find_dbt_project()

    def rng(self, domain: str) -> random.Random:
        """A random stream per domain, so adding a domain changes no other's output."""
        digest = hashlib.sha256(f"{self.seed}:{domain}".encode()).digest()
        return random.Random(int.from_bytes(digest[:8], "big"))

    def load_dates(self) -> list[date]:
        return [self.start + timedelta(days=d) for d in range(self.days)]


@dataclass
class WriteReport:
    written: list[Path]
    unchanged: list[Path]

    def merge(self, other: WriteReport) -> WriteReport:
        return WriteReport(self.written + other.written, self.unchanged + other.unchanged)


def write_landed(path: Path, data: bytes, report: WriteReport) -> None:
    """Write `data` at `path` once; identical re-writes are no-ops, different ones fail."""
    if path.exists():
        if path.read_bytes() != data:
            raise LandingConflictError(
                f"{path} already landed with different content. Landed files are never "
                "modified: generate into an empty FLOE_LANDING, or use the same --seed/--scale."
            )
        report.unchanged.append(path)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    tmp.replace(path)  # atomic: readers never see half a file
    report.written.append(path)


def manifest_bytes(kind: str) -> bytes:
    return (json.dumps({"kind": kind}, sort_keys=True) + "\n").encode()
