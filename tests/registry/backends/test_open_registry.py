"""``open_registry``: a backend by name, configured from Settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from floe.registry.backends import BACKENDS, FileRegistry, GlueRegistry, open_registry
from floe.runtime.settings import Settings


def test_file_registry_default_path_follows_floe_home(tmp_path: Path) -> None:
    settings = Settings.from_env({"FLOE_HOME": str(tmp_path)})
    reg = open_registry("local", settings)
    assert isinstance(reg, FileRegistry)
    assert reg.path == tmp_path / "state" / "registry" / "registry.json"
    with pytest.raises(ValueError, match="backend"):
        open_registry("consul", settings)


def test_backends_are_built_from_explicit_settings(tmp_path: Path) -> None:
    settings = Settings.from_env(
        {
            "FLOE_HOME": str(tmp_path),
            "FLOE_GLUE_ENDPOINT": "http://127.0.0.1:1",
            "AWS_DEFAULT_REGION": "eu-west-1",
        }
    )
    local = open_registry("file", settings)  # "file" is an alias of "local"
    assert isinstance(local, FileRegistry)
    assert local.path == settings.registry_dir / "registry.json"
    glue = open_registry("glue", settings)
    assert isinstance(glue, GlueRegistry)
    assert (glue.endpoint_url, glue.region) == ("http://127.0.0.1:1", "eu-west-1")
    assert sorted(BACKENDS) == ["glue", "local"]
