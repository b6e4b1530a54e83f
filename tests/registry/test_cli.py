"""`floe registry check | sync | show` through the real top-level CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from floe.cli import main

REPO_SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"


@pytest.fixture
def runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setenv("FLOE_HOME", str(tmp_path / "home"))
    return CliRunner()


@pytest.fixture
def schemas_copy(tmp_path: Path) -> Path:
    return Path(shutil.copytree(REPO_SCHEMAS, tmp_path / "schemas"))


def test_check_passes_on_the_repo_schemas(runner: CliRunner) -> None:
    result = runner.invoke(main, ["registry", "check", "--path", str(REPO_SCHEMAS)])
    assert result.exit_code == 0, result.output
    for name in (
        "unicorn_ride_request",
        "weather_report",
        "ventilator",
        "movies",
        "customer_event",
        "orders",
    ):
        assert f"floe/{name}" in result.output
    assert "6 schema(s) compatible" in result.output


def test_check_fails_on_a_required_field_added_under_backward(
    runner: CliRunner, schemas_copy: Path
) -> None:
    weather = schemas_copy / "floe" / "weather_report"
    v3 = json.loads((weather / "v2.json").read_text())
    v3["properties"]["humidity"] = {"type": "integer"}
    v3["required"].append("humidity")
    (weather / "v3.json").write_text(json.dumps(v3))
    result = runner.invoke(main, ["registry", "check", "--path", str(schemas_copy)])
    assert result.exit_code == 1
    assert "v3.json: v3 vs v2 (backward): humidity: required_added" in result.output
    # The root content model is open, so v2 data may already carry a non-integer
    # "humidity": typing it is a second, separate break.
    assert "humidity: type_changed" in result.output
    assert "2 violation(s)" in result.output


def test_check_reports_every_violation_and_layout_problem(
    runner: CliRunner, schemas_copy: Path
) -> None:
    movies = schemas_copy / "floe" / "movies"
    v3 = json.loads((movies / "v2.avsc").read_text())
    v3["fields"].append({"name": "rating", "type": "int"})
    (movies / "v3.avsc").write_text(json.dumps(v3))
    (schemas_copy / "floe" / "orders" / "v3.json").write_text("{}")  # gap: no v2
    result = runner.invoke(main, ["registry", "check", "--path", str(schemas_copy)])
    assert result.exit_code == 1
    assert "v3 vs v2 (backward): rating: missing_default" in result.output
    assert "layout: version numbers have gaps" in result.output


def test_sync_local_is_idempotent_and_show_prints_uuids(runner: CliRunner, tmp_path: Path) -> None:
    before = runner.invoke(
        main, ["registry", "show", "weather_report", "--path", str(REPO_SCHEMAS)]
    )
    assert before.exit_code == 0 and "not synced" in before.output
    first = runner.invoke(
        main, ["registry", "sync", "--backend", "local", "--path", str(REPO_SCHEMAS)]
    )
    assert first.exit_code == 0, first.output
    assert "8 new version(s), 0 unchanged" in first.output
    second = runner.invoke(main, ["registry", "sync", "--path", str(REPO_SCHEMAS)])
    assert "0 new version(s), 8 unchanged" in second.output
    shown = runner.invoke(main, ["registry", "show", "floe/weather_report"])
    assert shown.exit_code == 0
    lines = [line.split() for line in shown.output.splitlines() if line.startswith("  v")]
    assert [line[0] for line in lines] == ["v1", "v2"]
    # The UUIDs printed before the sync are the ones the sync registered.
    assert [line.split()[1] for line in before.output.splitlines() if line.startswith("  v")] == [
        line[1] for line in lines
    ]
    assert (tmp_path / "home" / "state" / "registry" / "registry.json").exists()


def test_sync_refuses_to_register_when_the_check_fails(
    runner: CliRunner, schemas_copy: Path, tmp_path: Path
) -> None:
    weather = schemas_copy / "floe" / "weather_report"
    v2 = json.loads((weather / "v2.json").read_text())
    v2["properties"]["location"]["required"].append("country")
    (weather / "v2.json").write_text(json.dumps(v2))
    result = runner.invoke(main, ["registry", "sync", "--path", str(schemas_copy)])
    assert result.exit_code == 1
    assert "location.country: required_added" in result.output
    assert not (tmp_path / "home" / "state" / "registry" / "registry.json").exists()


def test_sync_glue_against_moto(
    runner: CliRunner, moto_reset: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FLOE_GLUE_ENDPOINT", moto_reset)
    args = ["registry", "sync", "--backend", "glue", "--path", str(REPO_SCHEMAS)]
    first = runner.invoke(main, args)
    assert first.exit_code == 0, first.output
    assert "8 new version(s), 0 unchanged (glue)" in first.output
    again = runner.invoke(main, args)
    assert "0 new version(s), 8 unchanged (glue)" in again.output
    shown = runner.invoke(main, ["registry", "show", "movies", "--backend", "glue"])
    assert shown.exit_code == 0 and "AVRO, glue" in shown.output
    assert len([line for line in shown.output.splitlines() if line.startswith("  v")]) == 2


def test_show_unknown_schema(runner: CliRunner) -> None:
    result = runner.invoke(main, ["registry", "show", "nope", "--path", str(REPO_SCHEMAS)])
    assert result.exit_code != 0 and "no schema floe/nope" in result.output
