"""The ``Registry`` interface's rules, held by every backend (Glue against moto_server)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from floe.registry.backends import (
    FileRegistry,
    GlueRegistry,
    Registry,
    UnknownSchemaError,
)
from floe.registry.compat import IncompatibleSchemaError
from tests.registry.backends.versions import V1, V2, V3_BAD, sdef


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
