"""The six landed streams (SPEC §3) and the registry they are framed with.

A stream is a folder ``<landing>/streams/<name>/`` of Kinesis-style JSONL files and
the registry schema its records are framed with. The raw table's record columns are
the Spark type of the schema's *latest* version (every chain here is BACKWARD, so
the latest reader type holds every older record; fields a record lacks are NULL).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from floe.registry.backends import DEFAULT_REGISTRY, FileRegistry
from floe.registry.layout import load_sources


@dataclass(frozen=True)
class StreamSpec:
    """One landed stream: its folder name, registry schema and extra typing rules."""

    name: str
    schema: str
    # Top-level string fields the raw table holds as timestamps (strptime format):
    # the seed's ApplyMapping casts ventilator `eventtime` string -> timestamp.
    timestamps: dict[str, str] = field(default_factory=dict)

    @property
    def table(self) -> str:
        return f"raw.{self.name}"


STREAMS: dict[str, StreamSpec] = {
    s.name: s
    for s in (
        StreamSpec("ventilator", "ventilator", {"eventtime": "%Y-%m-%d %H:%M:%S"}),
        StreamSpec("unicorn_rides", "unicorn_ride_request"),
        StreamSpec("weather", "weather_report"),
        StreamSpec("movies_cdc", "movies"),
        StreamSpec("customer_events", "customer_event"),
        StreamSpec("orders", "orders"),
    )
}


def schemas_dir() -> Path:
    """``schemas/`` of the project: $DBT_PROJECT_DIR, the working directory, else the repo."""
    candidates = []
    if "DBT_PROJECT_DIR" in os.environ:
        candidates.append(Path(os.environ["DBT_PROJECT_DIR"]) / "schemas")
    candidates.append(Path("schemas"))
    candidates.append(Path(__file__).resolve().parents[3] / "schemas")
    for candidate in candidates:
        if candidate.is_dir():
            return candidate.resolve()
    raise FileNotFoundError(f"no schemas/ directory found (looked in {candidates})")


def registry_path(state_dir: Path) -> Path:
    return state_dir / "registry"


def sync_local_registry(state_dir: Path, schemas: Path | None = None) -> FileRegistry:
    """Register every version under ``schemas/`` in the file registry (idempotent).

    Producers (the generator) and consumers (decode) both call it, so the UUIDs that
    frame landed records resolve without a manual ``floe registry sync``. UUIDs are
    uuid5 of the definition: the same on every machine.
    """
    registry = FileRegistry(registry_path(state_dir))
    for source in load_sources(schemas or schemas_dir()):
        for schema_def in source.schema_defs():
            registry.register_version(schema_def)
    return registry


@lru_cache(maxsize=32)
def _latest_definition(root: str, schema: str) -> tuple[str, str]:
    for source in load_sources(Path(root)):
        if source.name == schema and source.registry == DEFAULT_REGISTRY:
            import json

            return source.data_format, json.dumps(source.definitions[-1])
    raise LookupError(f"schema {DEFAULT_REGISTRY}/{schema} is not under {root}")


def record_type(spec: StreamSpec, schemas: Path | None = None):
    """Spark StructType of the stream's records (latest version, timestamps applied)."""
    from pyspark.sql import types as T

    from floe.registry.types import to_spark_type

    data_format, definition = _latest_definition(str(schemas or schemas_dir()), spec.schema)
    struct = to_spark_type(definition, data_format)
    fields = [
        T.StructField(f.name, T.TimestampType(), True)
        if f.name in spec.timestamps
        else T.StructField(f.name, f.dataType, True)
        for f in struct.fields
    ]
    return T.StructType(fields)
