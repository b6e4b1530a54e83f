"""AWS Glue Schema Registry through boto3 (a ``moto_server`` on loopback in tests).

Glue assigns its own version UUIDs. ``moto`` stores versions without checking any
compatibility mode and has no ``ListSchemaVersions``, so versions are read one by one
by number; floe's checker runs before anything is registered (:mod:`.base`).
"""

from __future__ import annotations

import contextlib
import uuid
from functools import cached_property
from typing import TYPE_CHECKING, Any, Self

from floe.registry.backends.base import (
    DEFAULT_REGISTRY,
    Registry,
    RegistryUnavailableError,
    SchemaDef,
    SchemaVersion,
    UnknownSchemaError,
    canonical,
)

if TYPE_CHECKING:
    from floe.runtime.settings import Settings

_NOT_FOUND = {"EntityNotFoundException", "InvalidInputException"}


class GlueRegistry(Registry):
    """AWS Glue Schema Registry at ``endpoint_url`` (None: AWS itself) in ``region``.

    ``region`` None leaves the region to boto3's own configuration chain; credentials
    always come from boto3's chain. :meth:`from_settings` takes both from
    :class:`floe.runtime.settings.Settings` (``FLOE_GLUE_ENDPOINT``, ``AWS_REGION``).
    """

    def __init__(
        self,
        endpoint_url: str | None = None,
        region: str | None = None,
        client: Any | None = None,
    ) -> None:
        super().__init__()
        self.endpoint_url = endpoint_url
        self.region = region
        if client is not None:
            self.__dict__["client"] = client

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        return cls(endpoint_url=settings.glue_endpoint, region=settings.aws_region)

    @cached_property
    def client(self) -> Any:
        import boto3
        from botocore.config import Config

        # Short timeouts and few retries: an unreachable registry must fail a build in
        # seconds with a clear message, not hang every decode task for minutes.
        config = Config(
            connect_timeout=5, read_timeout=20, retries={"max_attempts": 3, "mode": "standard"}
        )
        return boto3.client(
            "glue", endpoint_url=self.endpoint_url, region_name=self.region, config=config
        )

    @property
    def where(self) -> str:
        return f"{self.endpoint_url or 'AWS Glue'} ({self.region or 'boto3 default region'})"

    def _unavailable(self, exc: Exception) -> RegistryUnavailableError:
        return RegistryUnavailableError(
            f"the Glue Schema Registry at {self.where} cannot be asked: "
            f"{type(exc).__name__}: {exc}. Check FLOE_GLUE_ENDPOINT / AWS_ENDPOINT_URL, "
            "AWS_REGION and the AWS credentials the Spark executors see."
        )

    def check_reachable(self) -> None:
        """Ask for a version that cannot exist: "not found" proves the endpoint answers
        and the credentials may read versions (the one permission the decode needs)."""
        probe = uuid.UUID(int=0)
        self._misses.pop(probe, None)
        with contextlib.suppress(UnknownSchemaError):
            self._lookup(probe)

    def __getstate__(self) -> dict[str, Any]:
        # boto3 clients do not pickle; executors build their own.
        return {k: v for k, v in self.__dict__.items() if k != "client"}

    @staticmethod
    def _error_code(exc: Exception) -> str:
        code: str = getattr(exc, "response", {}).get("Error", {}).get("Code", "")
        return code

    def _schema_info(self, name: str, registry: str) -> dict[str, Any] | None:
        try:
            info: dict[str, Any] = self.client.get_schema(
                SchemaId={"RegistryName": registry, "SchemaName": name}
            )
        except self.client.exceptions.ClientError as exc:
            if self._error_code(exc) in _NOT_FOUND:
                return None
            raise
        return info

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
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            resp = self.client.get_schema_version(SchemaVersionId=str(version_id))
        except ClientError as exc:
            if self._error_code(exc) in _NOT_FOUND:
                raise UnknownSchemaError(
                    f"schema version {version_id} is not in the Glue registry at {self.where}"
                ) from exc
            raise self._unavailable(exc) from exc
        except BotoCoreError as exc:  # no connection, no credentials, timeouts
            raise self._unavailable(exc) from exc
        status = resp.get("Status", "AVAILABLE")
        if status != "AVAILABLE":
            # PENDING / FAILURE / DELETING: no producer should frame records with it.
            raise UnknownSchemaError(
                f"schema version {version_id} in the Glue registry at {self.where} is {status}"
            )
        return self._from_response(resp)
