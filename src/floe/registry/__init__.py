"""Schema registry room: wire framing, schemas as code, compatibility, backends.

The contract (wire format, layout, modes, backends) is ``docs/registry.md``.
Public surface (import from the submodules; this package imports nothing heavy so
``floe registry`` stays fast):

* :mod:`floe.registry.wire` — Glue / Confluent framing with typed errors.
* :mod:`floe.registry.layout` — ``schemas/<registry>/<schema>/`` as code.
* :mod:`floe.registry.compat` — compatibility checker for all eight Glue modes.
* :mod:`floe.registry.backends` — ``Registry`` interface, file and Glue backends,
  ``open_registry`` by name.
* :mod:`floe.registry.definitions` — definition parsing and the one resolver of Avro
  named types and JSON Schema ``$ref``.
* :mod:`floe.registry.types` — Avro / JSON Schema → Spark types.
* :mod:`floe.registry.codec` — ``frame`` / ``unframe`` records for ingestion.
"""
