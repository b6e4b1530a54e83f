"""Builders and the table-driven harness shared by the compatibility tests.

Each :class:`Case` is one evolution old → new with the expected outcome in each
direction: ``None`` when compatible, else ``(path, rule)`` of the violation that must be
reported. BACKWARD checks the backward direction (new reads old), FORWARD the forward
one (old reads new), FULL both, NONE neither, DISABLED rejects any second version.
With only two versions the ``_ALL`` modes must agree with their plain forms.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from floe.registry.compat import Mode, check_new_version

SCHEMAS = Path(__file__).resolve().parents[3] / "schemas"

Expect = tuple[str, str] | None


@dataclass(frozen=True)
class Case:
    id: str
    fmt: str
    old: object
    new: object
    backward: Expect
    forward: Expect


def rec(*fields: dict, name: str = "R", **extra: object) -> dict:
    return {"type": "record", "name": name, "fields": list(fields), **extra}


def f(name: str, type_: object, **extra: object) -> dict:
    return {"name": name, "type": type_, **extra}


def obj(props: dict, required: list[str] | None = None, closed: bool | None = None) -> dict:
    schema: dict = {"type": "object", "properties": props}
    if required:
        schema["required"] = required
    if closed is not None:
        schema["additionalProperties"] = not closed
    return schema


S = {"type": "string"}
I = {"type": "integer"}  # noqa: E741
N = {"type": "number"}
MISSING = "missing_default"
TYPE = "type_mismatch"


def load_schema(rel: str) -> object:
    """A version file of the repository's ``schemas/`` (e.g. ``floe/movies/v1.avsc``)."""
    return json.loads((SCHEMAS / rel).read_text())


def expected_violations(case: Case, mode: Mode) -> list[Expect]:
    """The violations (path, rule) the mode must report for this case, [] when accepted."""
    base = mode.value.removesuffix("_ALL")
    if base == "NONE":
        return []
    if base == "DISABLED":
        return [("", "versioning_disabled")]
    out: list[Expect] = []
    if base in ("BACKWARD", "FULL") and case.backward:
        out.append(case.backward)
    if base in ("FORWARD", "FULL") and case.forward:
        out.append(case.forward)
    return out


def assert_case(case: Case, mode: Mode) -> None:
    """``case`` registered as version 2 under ``mode`` reports exactly what it should."""
    found = check_new_version(case.new, [case.old], mode, case.fmt)
    expected = expected_violations(case, mode)
    if not expected:
        assert found == [], [str(v) for v in found]
        return
    reported = {(v.path, v.rule) for v in found}
    for item in expected:
        assert item in reported, (item, [str(v) for v in found])
    for v in found:  # every message names the versions, the field and the rule
        assert v.version == 2 and v.rule in str(v) and (v.path or "<root>") in str(v)
