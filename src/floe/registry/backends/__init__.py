"""Where schema versions live: one :class:`Registry` interface, one module per backend.

* :mod:`~floe.registry.backends.base` — the interface and its values (``SchemaDef``,
  ``SchemaVersion``, ``UnknownSchemaError``);
* :mod:`~floe.registry.backends.local` — a JSON file with stable UUIDs (the default);
* :mod:`~floe.registry.backends.glue` — AWS Glue Schema Registry through boto3.

:func:`open_registry` builds a backend by name from :class:`~floe.runtime.Settings`.
A new backend is a module with a ``Registry`` subclass plus one line in ``BACKENDS``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from floe.registry.backends.base import (
    DEFAULT_REGISTRY,
    Registry,
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


def open_registry(backend: str = "local", settings: Settings | None = None) -> Registry:
    """The registry backend named ``backend``, configured from ``settings``.

    ``settings`` defaults to :meth:`Settings.from_env` (the caller's environment).
    """
    from floe.runtime.settings import Settings

    impl = BACKENDS.get(_ALIASES.get(backend, backend))
    if impl is None:
        names = ", ".join(repr(n) for n in BACKENDS)
        raise ValueError(f"unknown registry backend {backend!r}: use one of {names}")
    return impl.from_settings(settings or Settings.from_env())


__all__ = [
    "BACKENDS",
    "DEFAULT_REGISTRY",
    "FileRegistry",
    "GlueRegistry",
    "Registry",
    "SchemaDef",
    "SchemaVersion",
    "UnknownSchemaError",
    "canonical",
    "open_registry",
    "stable_uuid",
]
