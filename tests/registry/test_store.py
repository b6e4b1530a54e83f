"""Both registry backends behind one interface; Glue against a live moto_server."""

from __future__ import annotations

import json
import pickle
import uuid
from pathlib import Path

import pytest

from floe.registry.compat import IncompatibleSchemaError
from floe.registry.store import (
    FileRegistry,
    GlueRegistry,
    Registry,
    SchemaDef,
    UnknownSchemaError,
    open_registry,
    stable_uuid,
)

V1 = {"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]}
V2 = {
    "type": "record",
    "name": "R",
    "fields": [
        {"name": "a", "type": "int"},
        {"name": "b", "type": ["null", "string"], "default": None},
    ],
}
V3_BAD = {
    "type": "record",
    "name": "R",
    "fields": [{"name": "a", "type": "int"}, {"name": "c", "type": "string"}],
}


def sdef(definition: object, mode: str = "BACKWARD", name: str = "rides") -> SchemaDef:
    return SchemaDef(name=name, data_format="AVRO", definition=definition, compatibility=mode)


@pytest.fixture(params=["file", "glue"])
def registry(request: pytest.FixtureRequest, tmp_path: Path) -> Registry:
    if request.param == "file":
        return FileRegistry(tmp_path / "reg")
    endpoint = request.getfixturevalue("moto_reset")
    return GlueRegistry(endpoint_url=endpoint)


def test_register_is_idempotent_and_versions_are_ordered(registry: Registry) -> None:
    u1 = registry.register_version(sdef(V1))
    assert registry.register_version(sdef(V1)) == u1
    # Same schema, other formatting and key order: still the same version.
    assert registry.register_version(sdef(json.dumps(V1, indent=4, sort_keys=True))) == u1
    u2 = registry.register_version(sdef(V2))
    assert u2 != u1
    assert registry.register_version(sdef(V1)) == u1  # an old version is found too
    versions = registry.versions("rides")
    assert [(v.version_number, v.uuid) for v in versions] == [(1, u1), (2, u2)]
    assert versions[1].schema == V2 and versions[1].data_format == "AVRO"
    assert registry.latest("rides").uuid == u2


def test_incompatible_version_is_rejected_before_the_backend(registry: Registry) -> None:
    registry.register_version(sdef(V1))
    with pytest.raises(IncompatibleSchemaError) as excinfo:
        registry.register_version(sdef(V3_BAD))
    assert "c: missing_default" in str(excinfo.value)
    assert excinfo.value.code == "incompatible_schema"
    assert len(registry.versions("rides")) == 1  # nothing registered
    # NONE lets the same change through.
    registry.register_version(sdef(V3_BAD, mode="NONE"))
    assert len(registry.versions("rides")) == 2


def test_disabled_refuses_a_second_version(registry: Registry) -> None:
    registry.register_version(sdef(V1, mode="DISABLED"))
    with pytest.raises(IncompatibleSchemaError, match="versioning_disabled"):
        registry.register_version(sdef(V2, mode="DISABLED"))


def test_get_by_uuid_and_unknown_uuid(registry: Registry) -> None:
    u1 = registry.register_version(sdef(V1))
    version = registry.get_by_uuid(u1)
    assert (version.name, version.version_number, version.uuid) == ("rides", 1, u1)
    assert registry.get_by_uuid(str(u1)) == version
    for bad in (uuid.uuid4(), "not-a-uuid"):
        with pytest.raises(UnknownSchemaError) as excinfo:
            registry.get_by_uuid(bad)
        assert excinfo.value.code == "unknown_schema"


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


def test_file_registry_default_path_follows_floe_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FLOE_HOME", str(tmp_path))
    assert FileRegistry().path == tmp_path / "state" / "registry" / "registry.json"
    assert isinstance(open_registry("local"), FileRegistry)
    with pytest.raises(ValueError, match="backend"):
        open_registry("consul")


def test_file_registry_pickles_with_its_cache(tmp_path: Path) -> None:
    reg = FileRegistry(tmp_path)
    u1 = reg.register_version(sdef(V1))
    reg.get_by_uuid(u1)
    clone = pickle.loads(pickle.dumps(reg))
    assert clone.get_by_uuid(u1).schema == V1


def test_glue_lookups_are_cached(moto_reset: str) -> None:
    reg = GlueRegistry(endpoint_url=moto_reset)
    u1 = reg.register_version(sdef(V1))
    first = reg.get_by_uuid(u1)
    # Wipe the server: the cached version still resolves, a fresh client cannot.
    import urllib.request

    urllib.request.urlopen(
        urllib.request.Request(f"{moto_reset}/moto-api/reset", method="POST")
    ).close()
    assert reg.get_by_uuid(u1) == first
    with pytest.raises(UnknownSchemaError):
        GlueRegistry(endpoint_url=moto_reset).get_by_uuid(u1)


def test_glue_schema_carries_the_declared_mode(
    moto_reset: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FLOE_GLUE_ENDPOINT", moto_reset)
    reg = open_registry("glue")
    assert isinstance(reg, GlueRegistry) and reg.endpoint_url == moto_reset
    reg.register_version(sdef(V1, mode="FULL"))
    info = reg.client.get_schema(SchemaId={"RegistryName": "floe", "SchemaName": "rides"})
    assert (info["Compatibility"], info["DataFormat"]) == ("FULL", "AVRO")
    reg.register_version(sdef(V2, mode="BACKWARD"))
    info = reg.client.get_schema(SchemaId={"RegistryName": "floe", "SchemaName": "rides"})
    assert info["Compatibility"] == "BACKWARD"
    assert pickle.loads(pickle.dumps(reg)).get_by_uuid(reg.latest("rides").uuid).schema == V2
