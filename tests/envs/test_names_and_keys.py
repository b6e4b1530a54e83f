"""Environment names, state files and diff keys, without Spark (docs/envs.md)."""

from __future__ import annotations

import json

import pytest

from floe.envs import EnvError, EnvNotFound, branch_of, list_envs, load, validate_name
from floe.envs.core import _write_atomic
from floe.envs.diff import keys_from_manifest
from floe.runtime import Settings


@pytest.mark.parametrize("name", ["dev", "pr_123", "a" * 40])
def test_valid_names_become_branches(name):
    assert branch_of(name) == f"env_{name}"


@pytest.mark.parametrize("name", ["", "Dev", "1pr", "pr-1", "a;drop", "a" * 41, "x y"])
def test_invalid_names_are_refused_saying_what_is_allowed(name):
    with pytest.raises(EnvError, match="lowercase letters, digits and underscores"):
        validate_name(name)


def test_missing_environment_names_the_command_that_creates_it(tmp_path):
    settings = Settings.from_env({"FLOE_HOME": str(tmp_path)})
    with pytest.raises(EnvNotFound, match="floe env create dev"):
        load(settings, "dev")
    assert list_envs(settings) == []


def test_state_is_written_atomically_and_listed_without_journals(tmp_path):
    settings = Settings.from_env({"FLOE_HOME": str(tmp_path)})
    state = {"name": "dev", "created_at": "2026-11-27T05:00:00+00:00", "base": {"marts.a": 1}}
    _write_atomic(tmp_path / "envs" / "dev.json", state)
    _write_atomic(tmp_path / "envs" / "dev.publish.json", {"env": "dev", "tables": {}})
    assert [e.name for e in list_envs(settings)] == ["dev"]
    assert load(settings, "dev").base == {"marts.a": 1}
    assert sorted(p.name for p in (tmp_path / "envs").iterdir()) == [
        "dev.json",
        "dev.publish.json",
    ]


def test_floe_env_is_read_at_the_edge():
    assert Settings.from_env({"FLOE_ENV": "dev"}).env == "dev"
    assert Settings.from_env({}).env is None


def test_keys_come_from_unique_key_then_unique_tests(tmp_path):
    manifest = {
        "nodes": {
            "model.p.a": {
                "resource_type": "model",
                "schema": "marts",
                "name": "a",
                "alias": "a",
                "config": {"unique_key": ["k1", "k2"]},
            },
            "model.p.b": {"resource_type": "model", "schema": "marts", "name": "b", "config": {}},
            "test.p.unique_b_id": {
                "resource_type": "test",
                "test_metadata": {"name": "unique"},
                "attached_node": "model.p.b",
                "column_name": "id",
            },
        }
    }
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(manifest))
    assert keys_from_manifest(path) == {"marts.a": ["k1", "k2"], "marts.b": ["id"]}
    assert keys_from_manifest(tmp_path / "missing.json") == {}


def test_models_of_tables_by_manifest_or_identifier(tmp_path):
    from floe.envs.rebuild import models_of

    manifest = tmp_path / "manifest.json"
    manifest.write_text(
        '{"nodes": {"model.p.m": {"resource_type": "model", "schema": "marts", '
        '"name": "fct_orders", "alias": "orders"}}}'
    )
    assert models_of(["marts.orders", "marts.dim_x"], manifest) == ["dim_x", "fct_orders"]
    assert models_of(["marts.orders"], None) == ["orders"]


def test_publish_rebuild_and_allow_moved_exclude_each_other():
    from click.testing import CliRunner

    from floe.envs.cli import env

    result = CliRunner().invoke(env, ["publish", "dev", "--rebuild", "--allow-moved"])
    assert result.exit_code == 1
    assert "--rebuild and --allow-moved exclude each other" in result.output
