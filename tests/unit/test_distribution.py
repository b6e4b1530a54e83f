"""The distribution is floelake on PyPI; the import name and the command stay floe."""

from __future__ import annotations

import tomllib
from pathlib import Path

from click.testing import CliRunner

import floe
from floe.cli import main

ROOT = Path(__file__).resolve().parents[2]


def test_the_distribution_name_is_the_one_the_code_looks_up():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["name"] == floe.DISTRIBUTION == "floelake"
    assert project["version"] == floe.__version__
    assert project["scripts"]["floe"] == "floe.cli:main"


def test_floe_version_names_the_command():
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == f"floe, version {floe.__version__}"
