"""What a compatibility check reports: a :class:`Violation` per broken rule, and the
exception a registry raises when a new version breaks its schema's mode.

Rule names are listed in ``docs/registry.md`` ("Violations").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Violation:
    """One reason a version is rejected: where (field path), which rule, and why.

    ``version``/``against``/``direction`` are filled in when the violation comes from a
    mode check (e.g. version 3 checked BACKWARD against version 2).
    """

    path: str
    rule: str
    detail: str
    version: int | None = None
    against: int | None = None
    direction: str | None = None

    def __str__(self) -> str:
        where = self.path or "<root>"
        prefix = ""
        if self.version is not None:
            prefix = f"v{self.version}"
            if self.against is not None:
                prefix += f" vs v{self.against}"
            if self.direction:
                prefix += f" ({self.direction})"
            prefix += ": "
        return f"{prefix}{where}: {self.rule}: {self.detail}"


class IncompatibleSchemaError(ValueError):
    """A new version breaks its schema's compatibility mode; ``violations`` say where."""

    code = "incompatible_schema"

    def __init__(self, schema: str, violations: Sequence[Violation]) -> None:
        self.schema = schema
        self.violations = list(violations)
        lines = "\n  ".join(str(v) for v in self.violations)
        super().__init__(f"schema {schema!r}: new version rejected:\n  {lines}")


def join_path(path: str, part: str) -> str:
    """``a.b`` field paths as violations print them (the root is the empty path)."""
    return f"{path}.{part}" if path else part
