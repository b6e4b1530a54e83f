"""The local file registry kept in step with ``schemas/`` (schemas as code, docs/registry.md).

Producers (the generator) and consumers (the decode) both sync it, so the UUIDs that
frame landed records resolve without a manual ``floe registry sync``. UUIDs are uuid5 of
the definition: the same on every machine.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from floe.registry.backends import FileRegistry, UnknownSchemaError
from floe.registry.layout import load_sources


def schemas_dir(project_dir: Path) -> Path:
    """``schemas/`` of a dbt project."""
    return project_dir / "schemas"


def registry_path(state_dir: Path) -> Path:
    """The file registry's folder under engine state."""
    return state_dir / "registry"


def sync_local_registry(state_dir: Path, schemas: Path) -> FileRegistry:
    """Register every version under ``schemas`` in the file registry of ``state_dir``
    (idempotent)."""
    registry = FileRegistry(registry_path(state_dir))
    for source in load_sources(schemas):
        for schema_def in source.schema_defs():
            registry.register_version(schema_def)
    return registry


@lru_cache(maxsize=64)
def latest_definition(root: str, registry: str, schema: str) -> tuple[str, str]:
    """(data format, JSON text) of the latest version of ``registry/schema`` under ``root``.

    UnknownSchemaError when ``schemas/<registry>/<schema>/`` does not exist there.
    """
    for source in load_sources(Path(root)):
        if source.name == schema and source.registry == registry:
            return source.data_format, json.dumps(source.definitions[-1])
    raise UnknownSchemaError(
        f"schema {registry}/{schema} is not under {root} (schemas/<registry>/<schema>/)"
    )
