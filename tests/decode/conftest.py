"""Shared fixtures of the decoder tests: a file registry with the demo's stream schemas."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from floe.registry.backends import FileRegistry, SchemaDef

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas" / "floe"


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> FileRegistry:
    """unicorn_ride_request v1 (Avro) and weather_report v1, v2 (JSON Schema)."""
    reg = FileRegistry(tmp_path_factory.mktemp("decode-reg"))
    for name, fmt, file in [
        ("unicorn_ride_request", "AVRO", "v1.avsc"),
        ("weather_report", "JSON", "v1.json"),
        ("weather_report", "JSON", "v2.json"),
    ]:
        definition = json.loads((SCHEMAS / name / file).read_text())
        reg.register_version(SchemaDef(name=name, data_format=fmt, definition=definition))
    return reg
