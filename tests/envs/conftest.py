"""Shared fixtures of the environment tests (docs/envs.md), on tests/fixtures/env_project."""

from __future__ import annotations

from pathlib import Path

import pytest

from floe.dbt_runner import run_dbt

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "env_project"


@pytest.fixture
def build(lakehouse, dbt_target_path, monkeypatch):
    """`build(args, env=None, **vars)`: dbt in-process on the fixture, FLOE_ENV=env."""

    def run(args: list[str], env: str | None = None, expect_success: bool = True, **vars):
        if env is None:
            monkeypatch.delenv("FLOE_ENV", raising=False)
        else:
            monkeypatch.setenv("FLOE_ENV", env)
        try:
            result = run_dbt(
                args,
                vars=vars or None,
                project=FIXTURE,
                target_path=dbt_target_path / "envfixture",
                quiet=True,
            )
        finally:
            monkeypatch.delenv("FLOE_ENV", raising=False)
        if expect_success:
            assert result.success, result.failures or result.exception
        return result

    return run
