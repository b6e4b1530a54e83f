"""Compatibility checker for the eight Glue Schema Registry modes (``docs/registry.md``).

* :mod:`~floe.registry.compat.modes` — the modes, which versions a mode compares a new
  version against, and in which direction;
* :mod:`~floe.registry.compat.avro` — Avro schema-resolution rules;
* :mod:`~floe.registry.compat.json_schema` — JSON Schema subschema rules;
* :mod:`~floe.registry.compat.violations` — what a check reports.
"""

from floe.registry.compat.modes import (
    Mode,
    check_chain,
    check_new_version,
    compared_versions,
    directions,
    reader_violations,
    validate_definition,
)
from floe.registry.compat.violations import IncompatibleSchemaError, Violation

__all__ = [
    "IncompatibleSchemaError",
    "Mode",
    "Violation",
    "check_chain",
    "check_new_version",
    "compared_versions",
    "directions",
    "reader_violations",
    "validate_definition",
]
