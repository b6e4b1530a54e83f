"""The file-backed registry: the embedded default, no server needed.

Version UUIDs are derived with ``uuid5`` over registry, schema name, version number and
canonical definition, so every machine that registers the same chain gets the same
UUIDs — framed test data and landing files stay decodable after ``rm -rf .floe``
(``docs/registry.md``, "Stable UUIDs").
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from floe.registry.backends.base import (
    DEFAULT_REGISTRY,
    Registry,
    SchemaDef,
    SchemaVersion,
    UnknownSchemaError,
)

if TYPE_CHECKING:
    from floe.runtime.settings import Settings

# Fixed namespace for uuid5: changing it would change every local schema version UUID.
UUID_NAMESPACE = uuid.UUID("6b1c7a52-4d0e-5c3f-9f0a-f10e5c4e3a01")


def stable_uuid(registry: str, name: str, number: int, text: str) -> uuid.UUID:
    """The UUID the file registry gives version ``number`` with canonical ``text``."""
    return uuid.uuid5(UUID_NAMESPACE, f"{registry}/{name}/{number}/{text}")


class FileRegistry(Registry):
    """A registry in one JSON file (by default ``$FLOE_HOME/state/registry/registry.json``).

    ``path`` is the JSON file or the directory that holds ``registry.json``. Writes take
    an exclusive ``flock`` and replace the file atomically, so concurrent readers
    (Spark tasks resolving UUIDs) never see half a file. The object holds no open
    handles and pickles cheaply to executors.
    """

    def __init__(self, path: Path | str) -> None:
        super().__init__()
        root = Path(path)
        self.path = root / "registry.json" if root.suffix != ".json" else root

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        return cls(settings.registry_dir)

    def _read(self) -> dict[str, Any]:
        try:
            data: dict[str, Any] = json.loads(self.path.read_text())
        except FileNotFoundError:
            return {"schemas": {}}
        return data

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_suffix(".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield

    @staticmethod
    def _version(entry: dict[str, Any], raw: dict[str, Any]) -> SchemaVersion:
        return SchemaVersion(
            name=entry["name"],
            version_number=raw["version_number"],
            data_format=entry["data_format"],
            definition=raw["definition"],
            uuid=uuid.UUID(raw["uuid"]),
            registry=entry["registry"],
        )

    def versions(self, name: str, registry: str = DEFAULT_REGISTRY) -> list[SchemaVersion]:
        entry = self._read()["schemas"].get(f"{registry}/{name}")
        if entry is None:
            return []
        return [self._version(entry, raw) for raw in entry["versions"]]

    def schemas(self) -> list[tuple[str, str]]:
        """(registry, name) of every schema, sorted."""
        return sorted((e["registry"], e["name"]) for e in self._read()["schemas"].values())

    def register_version(self, schema_def: SchemaDef) -> uuid.UUID:
        # Check and store under one lock: two processes syncing at once must not both
        # append "version 3".
        with self._locked():
            return super().register_version(schema_def)

    def _store(
        self, schema_def: SchemaDef, text: str, number: int, schema_exists: bool
    ) -> SchemaVersion:
        data = self._read()  # re-read inside the lock held by register_version
        key = f"{schema_def.registry}/{schema_def.name}"
        entry = data["schemas"].setdefault(
            key,
            {
                "registry": schema_def.registry,
                "name": schema_def.name,
                "data_format": schema_def.data_format,
                "versions": [],
            },
        )
        entry["compatibility"] = schema_def.compatibility.value
        entry["description"] = schema_def.description
        raw = {
            "version_number": number,
            "uuid": str(stable_uuid(schema_def.registry, schema_def.name, number, text)),
            "definition": text,
        }
        entry["versions"].append(raw)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".registry-")
        with os.fdopen(fd, "w") as out:
            json.dump(data, out, indent=1, sort_keys=True)
        os.replace(tmp, self.path)
        return self._version(entry, raw)

    def _lookup(self, version_id: uuid.UUID) -> SchemaVersion:
        wanted = str(version_id)
        for entry in self._read()["schemas"].values():
            for raw in entry["versions"]:
                if raw["uuid"] == wanted:
                    return self._version(entry, raw)
        raise UnknownSchemaError(f"schema version {wanted} is not in {self.path}")

    @property
    def where(self) -> str:
        return str(self.path)

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path, "_by_uuid": dict(self._by_uuid)}

    def __setstate__(self, state: dict[str, Any]) -> None:
        Registry.__init__(self)
        self.__dict__.update(state)
