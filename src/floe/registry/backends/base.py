"""The ``Registry`` interface every backend implements, and the values it deals in.

Every backend shares the rules that matter (``docs/registry.md``, "Backends"):

* registering is idempotent — a definition already stored (any version) returns that
  version's UUID and registers nothing;
* a new version is checked with floe's own compatibility checker *before* it reaches
  the backend (``moto`` checks nothing, and a local file has no server to check);
* lookups by UUID are cached (a version never changes once registered); an unknown
  UUID raises :class:`UnknownSchemaError` with the stable code ``unknown_schema``.

A backend implements :meth:`Registry.versions`, :meth:`Registry._store`,
:meth:`Registry._lookup` and :meth:`Registry.from_settings`; the rules above live here.
"""

from __future__ import annotations

import json
import time
import uuid
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Self

from floe.registry.compat import IncompatibleSchemaError, Mode, check_new_version

if TYPE_CHECKING:
    from floe.runtime.settings import Settings

DEFAULT_REGISTRY = "floe"


class UnknownSchemaError(LookupError):
    """No schema version with this UUID (or name) in the registry."""

    code = "unknown_schema"

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


def canonical(definition: Any) -> str:
    """One text per schema: sorted keys, no whitespace (field order is kept: it is a list).

    Idempotency and UUIDs depend on it, so formatting a ``.avsc`` file never creates a
    new version.
    """
    if isinstance(definition, bytes | bytearray):
        definition = definition.decode()
    if isinstance(definition, str):
        try:
            definition = json.loads(definition)
        except json.JSONDecodeError:
            return definition.strip()  # not JSON: a Protobuf .proto text, kept as written
    return json.dumps(definition, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class RegistryUnavailableError(RuntimeError):
    """The registry cannot be asked (unreachable, refused credentials, throttled for good).

    Not a decode error: quarantining every record as ``unknown_schema`` because the
    registry is down would bury a whole batch, so the build fails instead, naming
    where the registry was looked for.
    """


@dataclass(frozen=True)
class SchemaDef:
    """A schema as declared in ``schemas/<registry>/<name>/`` — what gets registered."""

    name: str
    data_format: str
    definition: Any
    compatibility: Mode = Mode.BACKWARD
    registry: str = DEFAULT_REGISTRY
    description: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "data_format", self.data_format.upper())
        object.__setattr__(self, "compatibility", Mode.parse(self.compatibility))

    @property
    def canonical(self) -> str:
        return canonical(self.definition)


@dataclass(frozen=True)
class SchemaVersion:
    """One registered version; ``definition`` is the canonical JSON text."""

    name: str
    version_number: int
    data_format: str
    definition: str
    uuid: uuid.UUID
    registry: str = DEFAULT_REGISTRY
    parsed_cache: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def schema(self) -> Any:
        """The parsed definition (parsed once per version object)."""
        if "schema" not in self.parsed_cache:
            self.parsed_cache["schema"] = json.loads(self.definition)
        return self.parsed_cache["schema"]


class Registry(ABC):
    """Registers versions under a compatibility mode and resolves them by UUID.

    Lookups are cached per object: a found version forever (a version never changes
    once registered), an unknown UUID for :attr:`miss_ttl` seconds — a batch full of
    records with one unknown UUID asks the backend once, and a version registered
    later is still found by a long-running process.
    """

    miss_ttl: float = 300.0

    def __init__(self) -> None:
        self._by_uuid: dict[uuid.UUID, SchemaVersion] = {}
        self._misses: dict[uuid.UUID, tuple[float, str]] = {}
        self.lookups = 0  # backend round trips of get_by_uuid (tests count them)

    @property
    def where(self) -> str:
        """Where this registry lives, for messages (a file, an endpoint)."""
        return type(self).__name__

    def check_reachable(self) -> None:
        """Raise :class:`RegistryUnavailableError` when the backend cannot be asked.

        A local backend is always reachable (a missing file is an empty registry).
        """
        return None

    @classmethod
    @abstractmethod
    def from_settings(cls, settings: Settings) -> Self:
        """The backend configured by ``settings`` (what ``open_registry`` calls)."""

    def register_version(self, schema_def: SchemaDef) -> uuid.UUID:
        """The UUID of ``schema_def``'s definition, registering it if it is new.

        Raises :class:`IncompatibleSchemaError` (nothing registered) when the new version
        breaks the declared compatibility mode.
        """
        existing = self.versions(schema_def.name, schema_def.registry)
        text = schema_def.canonical
        for version in existing:
            if version.definition == text:
                return version.uuid
        violations = check_new_version(
            text,
            [v.definition for v in existing],
            schema_def.compatibility,
            schema_def.data_format,
        )
        if violations:
            raise IncompatibleSchemaError(schema_def.name, violations)
        version = self._store(schema_def, text, len(existing) + 1, bool(existing))
        self._by_uuid[version.uuid] = version
        return version.uuid

    def get_by_uuid(self, version_id: uuid.UUID | str) -> SchemaVersion:
        """The version with this UUID (cached after the first lookup)."""
        try:
            key = version_id if isinstance(version_id, uuid.UUID) else uuid.UUID(str(version_id))
        except ValueError:
            raise UnknownSchemaError(f"{version_id!r} is not a schema version UUID") from None
        hit = self._by_uuid.get(key)
        if hit is not None:
            return hit
        missed = self._misses.get(key)
        if missed is not None and time.monotonic() - missed[0] < self.miss_ttl:
            raise UnknownSchemaError(missed[1])
        self.lookups += 1
        try:
            hit = self._lookup(key)
        except UnknownSchemaError as exc:
            self._misses[key] = (time.monotonic(), exc.detail)
            raise
        self._by_uuid[key] = hit
        self._misses.pop(key, None)
        return hit

    def latest(self, name: str, registry: str = DEFAULT_REGISTRY) -> SchemaVersion:
        versions = self.versions(name, registry)
        if not versions:
            raise UnknownSchemaError(f"no schema {registry}/{name} is registered")
        return versions[-1]

    @abstractmethod
    def versions(self, name: str, registry: str = DEFAULT_REGISTRY) -> list[SchemaVersion]:
        """Every version of a schema, oldest first ([] when the schema does not exist)."""

    @abstractmethod
    def _store(
        self, schema_def: SchemaDef, text: str, number: int, schema_exists: bool
    ) -> SchemaVersion:
        """Persist an already-checked new version."""

    @abstractmethod
    def _lookup(self, version_id: uuid.UUID) -> SchemaVersion:
        """Resolve a UUID in the backend or raise :class:`UnknownSchemaError`."""
