"""Where schema versions live: one ``Registry`` interface, a file backend and AWS Glue.

Both backends share the rules that matter (SPEC §4):

* registering is idempotent — a definition already stored (any version) returns that
  version's UUID and registers nothing;
* a new version is checked with floe's own compatibility checker *before* it reaches
  the backend (``moto`` checks nothing, and the local file has no server to check);
* lookups by UUID are cached (a version never changes once registered); an unknown
  UUID raises :class:`UnknownSchemaError` with the stable code ``unknown_schema``.

The file registry derives version UUIDs with ``uuid5`` over registry, schema name,
version number and canonical definition, so every machine that registers the same
chain gets the same UUIDs — framed test data and landing files stay decodable after
``rm -rf .floe``. Glue assigns its own UUIDs.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile
import uuid
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from floe.registry.compat import IncompatibleSchemaError, Mode, check_new_version

DEFAULT_REGISTRY = "floe"
# Fixed namespace for uuid5: changing it would change every local schema version UUID.
UUID_NAMESPACE = uuid.UUID("6b1c7a52-4d0e-5c3f-9f0a-f10e5c4e3a01")


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
        definition = json.loads(definition)
    return json.dumps(definition, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


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
    parsed_cache: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def schema(self) -> Any:
        """The parsed definition (parsed once per version object)."""
        if "schema" not in self.parsed_cache:
            self.parsed_cache["schema"] = json.loads(self.definition)
        return self.parsed_cache["schema"]


class Registry(ABC):
    """Registers versions under a compatibility mode and resolves them by UUID."""

    def __init__(self) -> None:
        self._by_uuid: dict[uuid.UUID, SchemaVersion] = {}

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
        if hit is None:
            hit = self._lookup(key)
            self._by_uuid[key] = hit
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


# --------------------------------------------------------------------------- file


def default_registry_dir() -> Path:
    from floe.runtime import Settings

    return Settings.from_env().state_dir / "registry"


def stable_uuid(registry: str, name: str, number: int, text: str) -> uuid.UUID:
    return uuid.uuid5(UUID_NAMESPACE, f"{registry}/{name}/{number}/{text}")


class FileRegistry(Registry):
    """A registry in one JSON file (default ``$FLOE_HOME/state/registry/registry.json``).

    Writes take an exclusive ``flock`` and replace the file atomically, so concurrent
    readers (Spark tasks resolving UUIDs) never see half a file. The object holds no
    open handles and pickles cheaply to executors.
    """

    def __init__(self, path: Path | str | None = None) -> None:
        super().__init__()
        root = Path(path) if path is not None else default_registry_dir()
        self.path = root / "registry.json" if root.suffix != ".json" else root

    def _read(self) -> dict[str, Any]:
        try:
            return json.loads(self.path.read_text())
        except FileNotFoundError:
            return {"schemas": {}}

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

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path, "_by_uuid": dict(self._by_uuid)}


# --------------------------------------------------------------------------- Glue

_NOT_FOUND = {"EntityNotFoundException", "InvalidInputException"}


class GlueRegistry(Registry):
    """AWS Glue Schema Registry through boto3 (a ``moto_server`` in tests and demos).

    Endpoint from ``FLOE_GLUE_ENDPOINT`` or ``AWS_ENDPOINT_URL``, region from
    ``AWS_REGION`` / ``AWS_DEFAULT_REGION`` (default us-east-1), credentials from the
    usual boto3 chain.
    """

    def __init__(
        self,
        endpoint_url: str | None = None,
        region: str | None = None,
        client: Any | None = None,
    ) -> None:
        super().__init__()
        env = os.environ
        self.endpoint_url = (
            endpoint_url or env.get("FLOE_GLUE_ENDPOINT") or env.get("AWS_ENDPOINT_URL")
        )
        self.region = (
            region or env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or ("us-east-1")
        )
        if client is not None:
            self.__dict__["client"] = client

    @cached_property
    def client(self) -> Any:
        import boto3

        return boto3.client("glue", endpoint_url=self.endpoint_url, region_name=self.region)

    def __getstate__(self) -> dict[str, Any]:
        # boto3 clients do not pickle; executors build their own.
        return {k: v for k, v in self.__dict__.items() if k != "client"}

    @staticmethod
    def _error_code(exc: Exception) -> str:
        return getattr(exc, "response", {}).get("Error", {}).get("Code", "")

    def _schema_info(self, name: str, registry: str) -> dict[str, Any] | None:
        try:
            return self.client.get_schema(SchemaId={"RegistryName": registry, "SchemaName": name})
        except self.client.exceptions.ClientError as exc:
            if self._error_code(exc) in _NOT_FOUND:
                return None
            raise

    def _ensure_registry(self, registry: str) -> None:
        try:
            self.client.get_registry(RegistryId={"RegistryName": registry})
        except self.client.exceptions.ClientError as exc:
            if self._error_code(exc) not in _NOT_FOUND:
                raise
            with contextlib.suppress(self.client.exceptions.AlreadyExistsException):
                self.client.create_registry(
                    RegistryName=registry, Description="floe schemas as code"
                )

    def _from_response(self, resp: dict[str, Any], data_format: str | None = None) -> SchemaVersion:
        # SchemaArn: arn:aws:glue:<region>:<account>:schema/<registry>/<name>
        registry, name = resp["SchemaArn"].split(":schema/", 1)[1].split("/", 1)
        return SchemaVersion(
            name=name,
            version_number=int(resp["VersionNumber"]),
            data_format=resp.get("DataFormat") or data_format or "",
            definition=canonical(resp["SchemaDefinition"]),
            uuid=uuid.UUID(resp["SchemaVersionId"]),
            registry=registry,
        )

    def versions(self, name: str, registry: str = DEFAULT_REGISTRY) -> list[SchemaVersion]:
        info = self._schema_info(name, registry)
        if info is None:
            return []
        out = []
        # GetSchemaVersion by number (moto has no ListSchemaVersions); deleted versions
        # leave gaps, which are skipped.
        for number in range(1, int(info.get("LatestSchemaVersion", 1)) + 1):
            try:
                resp = self.client.get_schema_version(
                    SchemaId={"RegistryName": registry, "SchemaName": name},
                    SchemaVersionNumber={"VersionNumber": number},
                )
            except self.client.exceptions.ClientError as exc:
                if self._error_code(exc) in _NOT_FOUND:
                    continue
                raise
            version = self._from_response(resp, info.get("DataFormat"))
            self._by_uuid.setdefault(version.uuid, version)
            out.append(version)
        return out

    def _store(
        self, schema_def: SchemaDef, text: str, number: int, schema_exists: bool
    ) -> SchemaVersion:
        schema_id = {"RegistryName": schema_def.registry, "SchemaName": schema_def.name}
        if not schema_exists:
            self._ensure_registry(schema_def.registry)
            resp = self.client.create_schema(
                RegistryId={"RegistryName": schema_def.registry},
                SchemaName=schema_def.name,
                DataFormat=schema_def.data_format,
                Compatibility=schema_def.compatibility.value,
                Description=schema_def.description or schema_def.name,
                SchemaDefinition=text,
            )
        else:
            info = self._schema_info(schema_def.name, schema_def.registry) or {}
            if info.get("Compatibility") != schema_def.compatibility.value:
                # schemas/ is the source of truth for the mode as well.
                self.client.update_schema(
                    SchemaId=schema_id, Compatibility=schema_def.compatibility.value
                )
            resp = self.client.register_schema_version(SchemaId=schema_id, SchemaDefinition=text)
        version_id = resp["SchemaVersionId"]
        return self._lookup(uuid.UUID(version_id))

    def _lookup(self, version_id: uuid.UUID) -> SchemaVersion:
        try:
            resp = self.client.get_schema_version(SchemaVersionId=str(version_id))
        except self.client.exceptions.ClientError as exc:
            if self._error_code(exc) in _NOT_FOUND:
                raise UnknownSchemaError(
                    f"schema version {version_id} is not in the Glue registry at "
                    f"{self.endpoint_url or 'AWS'} ({self.region})"
                ) from exc
            raise
        return self._from_response(resp)


def open_registry(backend: str = "local", path: Path | str | None = None) -> Registry:
    """The registry named by ``backend`` (``local`` file or ``glue``)."""
    if backend in ("local", "file"):
        return FileRegistry(path)
    if backend == "glue":
        return GlueRegistry()
    raise ValueError(f"unknown registry backend {backend!r}: use 'local' or 'glue'")
