"""Schemas as code: ``schemas/<registry>/<schema>/schema.yml`` + ``v1.avsc``, ``v2.avsc``…

``schema.yml`` holds ``data_format`` (AVRO | JSON), ``compatibility`` (one of the eight
modes) and an optional ``description``. Versions are ``v<N>.avsc`` for Avro and
``v<N>.json`` for JSON Schema, numbered from 1 without gaps, oldest first. Layout
mistakes are reported as violations (rule ``layout``), the same way as compatibility
breaks, so ``floe registry check`` lists every problem in one run.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from floe.registry.backends import SchemaDef
from floe.registry.compat import Mode, Violation, check_chain

EXTENSIONS = {"AVRO": ".avsc", "JSON": ".json", "PROTOBUF": ".proto"}
_VERSION_FILE = re.compile(r"^v(\d+)\.(avsc|json|proto)$")


@dataclass
class SchemaSource:
    """One schema directory: its declaration and its version files, oldest first."""

    registry: str
    name: str
    directory: Path
    data_format: str = ""
    compatibility: Mode = Mode.BACKWARD
    description: str = ""
    files: list[Path] = field(default_factory=list)
    definitions: list[Any] = field(default_factory=list)
    problems: list[Violation] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.registry}/{self.name}"

    def schema_defs(self) -> list[SchemaDef]:
        return [
            SchemaDef(
                name=self.name,
                data_format=self.data_format,
                definition=definition,
                compatibility=self.compatibility,
                registry=self.registry,
                description=self.description,
            )
            for definition in self.definitions
        ]

    def check(self) -> list[tuple[Path, Violation]]:
        """Layout problems, then every version checked against its mode."""
        found = [(self.directory / "schema.yml", p) for p in self.problems]
        if found or not self.definitions:
            return found
        for violation in check_chain(self.definitions, self.compatibility, self.data_format):
            index = (violation.version or 1) - 1
            found.append((self.files[index], violation))
        return found


def _layout(detail: str) -> Violation:
    return Violation("", "layout", detail)


def load_source(directory: Path, registry: str) -> SchemaSource:
    source = SchemaSource(registry=registry, name=directory.name, directory=directory)
    spec_file = directory / "schema.yml"
    try:
        spec = yaml.safe_load(spec_file.read_text()) or {}
    except FileNotFoundError:
        source.problems.append(_layout("schema.yml is missing"))
        return source
    except yaml.YAMLError as exc:
        source.problems.append(_layout(f"schema.yml is not YAML: {exc}"))
        return source
    source.data_format = str(spec.get("data_format", "")).upper()
    source.description = str(spec.get("description", "") or "").strip()
    if source.data_format not in EXTENSIONS:
        source.problems.append(
            _layout(f"data_format {spec.get('data_format')!r} must be AVRO, JSON or PROTOBUF")
        )
        return source
    try:
        source.compatibility = Mode.parse(spec.get("compatibility", "BACKWARD"))
    except ValueError as exc:
        source.problems.append(_layout(str(exc)))
    numbered: dict[int, Path] = {}
    for path in sorted(directory.iterdir()):
        match = _VERSION_FILE.match(path.name)
        if not match:
            continue
        if path.suffix != EXTENSIONS[source.data_format]:
            source.problems.append(
                _layout(
                    f"{path.name}: {source.data_format} versions are *{EXTENSIONS[source.data_format]}"
                )
            )
            continue
        numbered[int(match.group(1))] = path
    if not numbered:
        source.problems.append(_layout("no version files (v1.avsc / v1.json)"))
        return source
    expected = list(range(1, max(numbered) + 1))
    if sorted(numbered) != expected:
        missing = sorted(set(expected) - set(numbered))
        source.problems.append(_layout(f"version numbers have gaps: missing v{missing}"))
    for number in sorted(numbered):
        path = numbered[number]
        if source.data_format == "PROTOBUF":  # .proto text, checked by compat
            source.definitions.append(path.read_text())
            source.files.append(path)
            continue
        try:
            source.definitions.append(json.loads(path.read_text()))
            source.files.append(path)
        except json.JSONDecodeError as exc:
            source.problems.append(_layout(f"{path.name} is not JSON: {exc}"))
    return source


def load_sources(root: Path) -> list[SchemaSource]:
    """Every schema under ``root`` (``<registry>/<schema>/``), sorted by registry/name."""
    if not root.is_dir():
        raise FileNotFoundError(f"schema directory {root} does not exist")
    sources = []
    for registry_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        if registry_dir.name.startswith("."):
            continue
        for schema_dir in sorted(p for p in registry_dir.iterdir() if p.is_dir()):
            if not schema_dir.name.startswith("."):
                sources.append(load_source(schema_dir, registry_dir.name))
    return sources
