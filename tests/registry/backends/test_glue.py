"""The Glue backend against a live moto_server on loopback."""

from __future__ import annotations

import os
import pickle
import urllib.request

import pytest

from floe.registry.backends import GlueRegistry, UnknownSchemaError, open_registry
from floe.runtime.settings import Settings
from tests.registry.backends.versions import V1, V2, sdef


def test_glue_lookups_are_cached(moto_reset: str) -> None:
    reg = GlueRegistry(endpoint_url=moto_reset)
    u1 = reg.register_version(sdef(V1))
    first = reg.get_by_uuid(u1)
    # Wipe the server: the cached version still resolves, a fresh client cannot.
    urllib.request.urlopen(
        urllib.request.Request(f"{moto_reset}/moto-api/reset", method="POST")
    ).close()
    assert reg.get_by_uuid(u1) == first
    with pytest.raises(UnknownSchemaError):
        GlueRegistry(endpoint_url=moto_reset).get_by_uuid(u1)


def test_glue_schema_carries_the_declared_mode(moto_reset: str) -> None:
    reg = open_registry("glue", Settings.from_env({**os.environ, "FLOE_GLUE_ENDPOINT": moto_reset}))
    assert isinstance(reg, GlueRegistry) and reg.endpoint_url == moto_reset
    reg.register_version(sdef(V1, mode="FULL"))
    info = reg.client.get_schema(SchemaId={"RegistryName": "floe", "SchemaName": "rides"})
    assert (info["Compatibility"], info["DataFormat"]) == ("FULL", "AVRO")
    reg.register_version(sdef(V2, mode="BACKWARD"))
    info = reg.client.get_schema(SchemaId={"RegistryName": "floe", "SchemaName": "rides"})
    assert info["Compatibility"] == "BACKWARD"
    assert pickle.loads(pickle.dumps(reg)).get_by_uuid(reg.latest("rides").uuid).schema == V2
