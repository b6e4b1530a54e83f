"""The file-backed registry: stable UUIDs, persistence, pickling to executors."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

from floe.registry.backends import FileRegistry, stable_uuid
from tests.registry.backends.versions import V1, V2, sdef


def test_file_registry_persists_with_stable_uuids(tmp_path: Path) -> None:
    a, b = FileRegistry(tmp_path / "a"), FileRegistry(tmp_path / "b")
    ua = [a.register_version(sdef(v)) for v in (V1, V2)]
    ub = [b.register_version(sdef(v)) for v in (V1, V2)]
    assert ua == ub  # a fresh machine gets the same UUIDs
    assert ua[0] == stable_uuid(
        "floe", "rides", 1, json.dumps(V1, sort_keys=True, separators=(",", ":"))
    )
    reopened = FileRegistry(tmp_path / "a" / "registry.json")
    assert [v.uuid for v in reopened.versions("rides")] == ua
    assert reopened.get_by_uuid(ua[1]).schema == V2
    assert reopened.schemas() == [("floe", "rides")]


def test_file_registry_pickles_with_its_cache(tmp_path: Path) -> None:
    reg = FileRegistry(tmp_path)
    u1 = reg.register_version(sdef(V1))
    reg.get_by_uuid(u1)
    clone = pickle.loads(pickle.dumps(reg))
    assert clone.get_by_uuid(u1).schema == V1
