"""Schema registry room: wire framing, schemas as code, compatibility, backends.

Public surface (import from the submodules; this package imports nothing heavy so
``floe registry`` stays fast):

* :mod:`floe.registry.wire` — Glue / Confluent framing with typed errors.
* :mod:`floe.registry.compat` — compatibility checker for all eight Glue modes.
* :mod:`floe.registry.store` — ``Registry`` with file and Glue backends.
* :mod:`floe.registry.types` — Avro / JSON Schema → Spark types.
* :mod:`floe.registry.codec` — ``frame`` / ``unframe`` records for ingestion.
"""
