"""Decode staging folders: a pass never removes another live process's folder."""

from __future__ import annotations

import os
import subprocess
import sys
from types import SimpleNamespace

from floe.feeds.kinds.stream import _staging_dir


def test_only_finished_passes_are_removed(tmp_path):
    feed = SimpleNamespace(name="events")
    root = tmp_path / "decode_staging" / "events"
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    try:
        folders = {
            "live": root / f"p{other.pid}-aaaa",
            "live_dups": root / f"p{other.pid}-aaaa-duplicates",
            "dead": root / f"p{gone.pid}-bbbb",
            "mine": root / f"p{os.getpid()}-cccc",
            "legacy": root / "0123abcd",
        }
        for folder in folders.values():
            folder.mkdir(parents=True)
            (folder / "part-0.parquet").write_bytes(b"x")
        fresh = _staging_dir(tmp_path, feed)
        assert fresh.parent == root and fresh.name.startswith(f"p{os.getpid()}-")
        left = {name for name, folder in folders.items() if folder.exists()}
        assert left == {"live", "live_dups"}
    finally:
        other.kill()
        other.wait()
    _staging_dir(tmp_path, feed)  # the other process is gone now: its folders go too
    assert not any(root.iterdir())
