"""Where schema versions live: one :class:`Registry` interface, one module per backend.

* :mod:`~floe.registry.backends.base` — the interface and its values (``SchemaDef``,
  ``SchemaVersion``, ``UnknownSchemaError``);
* :mod:`~floe.registry.backends.local` — a JSON file with stable UUIDs (the default);
* :mod:`~floe.registry.backends.glue` — AWS Glue Schema Registry through boto3.

:func:`open_registry` builds a backend by name from :class:`~floe.runtime.Settings`.
A new backend is a module with a ``Registry`` subclass plus one line in ``BACKENDS``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from floe.registry.backends.base import (
    DEFAULT_REGISTRY,
    Registry,
    RegistryUnavailableError,
    SchemaDef,
    SchemaVersion,
    UnknownSchemaError,
    canonical,
)
from floe.registry.backends.glue import GlueRegistry
from floe.registry.backends.local import FileRegistry, stable_uuid

if TYPE_CHECKING:
    from floe.runtime.settings import Settings

# Backend name (as in `floe registry sync --backend NAME`) -> implementation.
BACKENDS: dict[str, type[Registry]] = {
    "local": FileRegistry,
    "glue": GlueRegistry,
}
_ALIASES = {"file": "local"}


def open_registry(backend: str, settings: Settings) -> Registry:
    """The registry backend named ``backend``, configured from ``settings``."""
    impl = BACKENDS.get(_ALIASES.get(backend, backend))
    if impl is None:
        names = ", ".join(repr(n) for n in BACKENDS)
        raise ValueError(f"unknown registry backend {backend!r}: use one of {names}")
    return impl.from_settings(settings)


@dataclass(frozen=True)
class RegistryRef:
    """What an executor needs to open the configured registry: names, not objects.

    Spark executors are other Python processes: the driver ships this small value
    (backend name, file location, endpoint, region) and each executor process opens
    the backend once (:meth:`open`), so its UUID cache — hits and misses — serves every
    batch that process decodes. Credentials are never in it: boto3 reads them from the
    executor's own environment.
    """

    backend: str = "local"
    registry_dir: str | None = None
    glue_endpoint: str | None = None
    aws_region: str | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> RegistryRef:
        backend = _ALIASES.get(settings.registry_backend, settings.registry_backend)
        if backend not in BACKENDS:
            names = ", ".join(repr(n) for n in BACKENDS)
            raise ValueError(f"unknown registry backend {backend!r}: use one of {names}")
        return cls(
            backend=backend,
            registry_dir=str(settings.registry_dir),
            glue_endpoint=settings.glue_endpoint,
            aws_region=settings.aws_region,
        )

    def open(self) -> Registry:
        """This process's registry object for the reference (built on first use)."""
        registry = _OPEN.get(self)
        if registry is None:
            if self.backend == "glue":
                registry = GlueRegistry(endpoint_url=self.glue_endpoint, region=self.aws_region)
            elif self.backend == "local":
                registry = FileRegistry(Path(self.registry_dir or "."))
            else:
                raise ValueError(f"unknown registry backend {self.backend!r}")
            _OPEN[self] = registry
        return registry


# One registry object per reference per process (executor Python workers are reused
# across tasks, so the cache outlives one partition).
_OPEN: dict[RegistryRef, Registry] = {}


__all__ = [
    "BACKENDS",
    "DEFAULT_REGISTRY",
    "FileRegistry",
    "GlueRegistry",
    "Registry",
    "RegistryRef",
    "RegistryUnavailableError",
    "SchemaDef",
    "SchemaVersion",
    "UnknownSchemaError",
    "canonical",
    "open_registry",
    "stable_uuid",
]
