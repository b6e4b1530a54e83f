"""Decode landed stream files inside Spark: envelope -> base64 -> frame -> record.

Shape of the work (docs/feeds.md, docs/registry.md):

* the JVM reads the JSONL files as text and parses the Kinesis envelope
  (``from_json``: fast, codegen, no Python);
* each Arrow batch goes through :func:`decode_batches` in a Python worker
  (``mapInArrow``): strict base64, Glue/Confluent unframing, schema lookup by UUID in
  a registry object built once per partition (its cache holds every schema the
  partition meets), fastavro / JSON + JSON Schema validation, then conversion of the
  whole batch to the stream's Arrow struct type in one ``pa.array`` call. A record
  that the type cannot hold (bigint overflow, an unparsable timestamp) is found by
  re-converting that batch record by record and quarantined as ``cast_failure``;
* nothing but per-file counts ever reaches the driver.

Every input line yields exactly one output row: either ``record`` is set, or
``error_code`` / ``error_detail`` say why not. Splitting those rows into the typed raw
table and ``raw.quarantine`` is :mod:`floe.decode.ingest`'s job.
"""

from __future__ import annotations

import binascii
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructType

# Codes beyond the codec's (floe.registry.codec.DECODE_ERRORS):
BAD_ENVELOPE = "bad_envelope"  # the line is not a Kinesis envelope with a data field
WRONG_SCHEMA = "wrong_schema"  # a registered schema, but not this stream's
CAST_FAILURE = "cast_failure"  # decodes and validates, but the Spark type cannot hold it

ENVELOPE_DDL = (
    "sequenceNumber string, partitionKey string, approximateArrivalTimestamp string, data string"
)
# Per-file columns the decode carries through unchanged (the stream kind's file attributes).
PASSTHROUGH = ("ingest_year", "ingest_month", "ingest_day", "ingest_hour")


@dataclass(frozen=True)
class StreamSpec:
    """What the decoder needs of a stream feed: its name, registry schema, typing rules."""

    name: str
    schema: str
    registry: str = "floe"
    # Top-level string fields the raw table holds as timestamps (strptime format):
    # the seed's ApplyMapping casts ventilator `eventtime` string -> timestamp.
    timestamps: dict[str, str] = field(default_factory=dict)


def envelope_lines(lines: DataFrame) -> DataFrame:
    """``_line``, ``_source_file``, ``ingest_*`` -> envelope columns, one row per line (JVM only)."""
    from pyspark.sql import functions as F

    env = F.from_json("_line", ENVELOPE_DDL)
    return lines.select(
        "_source_file",
        *PASSTHROUGH,
        env["sequenceNumber"].alias("_sequence_number"),
        env["partitionKey"].alias("_partition_key"),
        env["approximateArrivalTimestamp"].alias("_arrival"),
        env["data"].alias("_data"),
        # The whole line only travels to Python when it is needed (a broken envelope).
        F.when(env["data"].isNull(), F.col("_line")).alias("_line"),
    )


def decode_output_schema(record_type: StructType) -> StructType:
    """What :func:`decode_batches` returns per line.

    Only what the tables need travels back from Python: the envelope's base64 text and
    the frame bytes are set for quarantined rows only (``raw_data`` / ``raw_bytes``),
    so a good row carries its metadata and its typed record and nothing else.
    """
    from pyspark.sql import types as T

    return T.StructType(
        [
            T.StructField("_source_file", T.StringType()),
            T.StructField("_sequence_number", T.StringType()),
            T.StructField("_partition_key", T.StringType()),
            T.StructField("_arrival", T.StringType()),
            *(T.StructField(name, T.IntegerType()) for name in PASSTHROUGH),
            T.StructField("_schema_version", T.IntegerType()),
            T.StructField("record", record_type),
            T.StructField("error_code", T.StringType()),
            T.StructField("error_detail", T.StringType()),
            T.StructField("raw_data", T.StringType()),
            T.StructField("raw_bytes", T.BinaryType()),
        ]
    )


class _AvroFastPath:
    """Uncompressed Glue-framed Avro of a known version: header bytes -> parsed schema.

    The common record skips the general unframe (UUID object, registry lookup, format
    dispatch) and goes straight to fastavro; anything else — compressed, JSON, unknown
    header, a decode error — takes the general path, which owns the error codes.
    """

    def __init__(self, registry: Any) -> None:
        self.registry = registry
        self.schemas: dict[bytes, Any] = {}

    def decode(self, framed: bytes, spec: StreamSpec) -> tuple[Any, int] | None:
        header = framed[:18]
        if len(header) < 18 or header[0] != 0x03 or header[1] != 0x00:
            return None
        entry = self.schemas.get(header, False)
        if entry is False:
            entry = self._resolve(header, spec)
            self.schemas[header] = entry
        if entry is None:
            return None
        import io

        import fastavro

        parsed, number = entry
        buffer = io.BytesIO(framed)
        buffer.seek(18)
        try:
            record = fastavro.schemaless_reader(buffer, parsed, None)
        except Exception:  # the general path reports it with its code
            return None
        if buffer.tell() != len(framed):
            return None
        return record, number

    def _resolve(self, header: bytes, spec: StreamSpec) -> tuple[Any, int] | None:
        import uuid as _uuid

        from floe.registry import codec

        try:
            version = self.registry.get_by_uuid(_uuid.UUID(bytes=bytes(header[2:18])))
        except codec.DECODE_ERRORS:
            return None
        if version.data_format != "AVRO" or version.name != spec.schema:
            return None
        return codec._avro_schema(version.definition), version.version_number


def _decode_one(
    data: str | None,
    line: str | None,
    spec: StreamSpec,
    registry: Any,
    fast: _AvroFastPath | None = None,
) -> tuple[Any, int | None, str | None, str | None, bytes | None]:
    """(record, version number, error code, detail, raw bytes) of one landed line."""
    from floe.registry import codec, wire

    if data is None:
        raw = (line or "").encode()
        return None, None, BAD_ENVELOPE, "line is not a JSON object with a 'data' field", raw
    try:
        framed = binascii.a2b_base64(data, strict_mode=True)
    except (binascii.Error, ValueError) as exc:
        return None, None, wire.BadBase64Error.code, f"record is not valid base64: {exc}", None
    if fast is not None and not spec.timestamps:
        hit = fast.decode(framed, spec)
        if hit is not None:
            return hit[0], hit[1], None, None, framed
    try:
        version, record = codec.unframe(framed, registry)
    except codec.DECODE_ERRORS as exc:
        code = getattr(exc, "code", "decode_error")
        return None, None, code, str(getattr(exc, "detail", exc)), framed
    if version.name != spec.schema:
        detail = f"schema {version.name} v{version.version_number} is not {spec.schema}"
        return None, version.version_number, WRONG_SCHEMA, detail, framed
    for name, fmt in spec.timestamps.items():
        value = record.get(name) if isinstance(record, dict) else None
        if value is None:
            continue
        try:
            record[name] = datetime.strptime(value, fmt)
        except (TypeError, ValueError) as exc:
            detail = f"{name}: {value!r} is not a timestamp ({fmt}): {exc}"
            return None, version.version_number, CAST_FAILURE, detail, framed
    return record, version.version_number, None, None, framed


def _to_struct_array(records: list, arrow_type: pa.DataType) -> tuple[pa.Array, dict[int, str]]:
    """One conversion for the batch; record by record only if it fails (rare)."""
    import pyarrow as pa

    try:
        return pa.array(records, type=arrow_type), {}
    except (pa.ArrowException, OverflowError, TypeError, ValueError):
        pass
    failures: dict[int, str] = {}
    kept = []
    for index, record in enumerate(records):
        if record is not None:
            try:
                pa.array([record], type=arrow_type)
            except (pa.ArrowException, OverflowError, TypeError, ValueError) as exc:
                failures[index] = f"does not fit the table's type: {type(exc).__name__}: {exc}"
                record = None
        kept.append(record)
    return pa.array(kept, type=arrow_type), failures


def decode_batches(
    batches: Iterator[pa.RecordBatch],
    spec: StreamSpec,
    registry: Any,
    out_schema: pa.Schema,
) -> Iterator[pa.RecordBatch]:
    """The ``mapInArrow`` function: one output row per input line.

    The common record (uncompressed Avro framed with a header already seen in this
    partition) is decoded inline — base64, header lookup, fastavro, trailing-bytes
    check — without a function call or exception per record; everything else goes
    through :func:`_decode_one`, which owns the error codes.
    """
    import io

    import fastavro
    import pyarrow as pa

    record_arrow = out_schema.field("record").type
    fast = _AvroFastPath(registry)
    headers = fast.schemas
    reader = fastavro.schemaless_reader
    a2b = binascii.a2b_base64
    use_fast = not spec.timestamps
    meta = ("_source_file", "_sequence_number", "_partition_key", "_arrival", *PASSTHROUGH)
    for batch in batches:
        data = batch.column("_data").to_pylist()
        lines = batch.column("_line")
        lines = lines.to_pylist() if lines.null_count < len(lines) else None
        size = len(data)
        records: list = [None] * size
        versions: list = [None] * size
        codes: list = [None] * size
        details: list = [None] * size
        raw_data: list = [None] * size
        raws: list = [None] * size
        for i, item in enumerate(data):
            if use_fast and item is not None:
                try:
                    framed = a2b(item, strict_mode=True)
                except (binascii.Error, ValueError):
                    framed = None
                if framed is not None:
                    entry: Any = headers.get(framed[:18], False)
                    if entry is False and len(framed) >= 18 and framed[0] == 3 and framed[1] == 0:
                        entry = fast._resolve(framed[:18], spec)
                        headers[framed[:18]] = entry
                    if entry:
                        buffer = io.BytesIO(framed)
                        buffer.seek(18)
                        try:
                            record = reader(buffer, entry[0], None)
                        except Exception:  # the general path reports it with its code
                            record = None
                        if record is not None and buffer.tell() == len(framed):
                            records[i] = record
                            versions[i] = entry[1]
                            continue
            line = lines[i] if lines is not None else None
            record, version, code, detail, raw = _decode_one(item, line, spec, registry, fast)
            records[i], versions[i] = record, version
            if code is not None:
                codes[i], details[i], raws[i] = code, detail, raw
                raw_data[i] = item if item is not None else line
        struct, failures = _to_struct_array(records, record_arrow)
        for index, detail in failures.items():
            codes[index], details[index] = CAST_FAILURE, detail
            raw_data[index] = data[index]
            if raws[index] is None:
                raws[index] = binascii.a2b_base64(data[index])
        arrays = [batch.column(name) for name in meta]
        arrays += [
            pa.array(versions, type=pa.int32()),
            struct,
            pa.array(codes, type=pa.string()),
            pa.array(details, type=pa.string()),
            pa.array(raw_data, type=pa.string()),
            pa.array(raws, type=pa.binary()),
        ]
        yield pa.RecordBatch.from_arrays(arrays, schema=out_schema)


def decode_lines(
    lines: DataFrame, spec: StreamSpec, registry_dir: Path, record_type: StructType
) -> DataFrame:
    """Decode a DataFrame of ``_line, _source_file, ingest_*`` (batch or streaming).

    ``record_type`` is the raw table's record struct (the schema's latest version).
    Adds ``_arrival_ts`` (the envelope's approximateArrivalTimestamp).
    """
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import to_arrow_schema

    from floe.registry.backends import FileRegistry

    out_type = decode_output_schema(record_type)
    arrow_schema = to_arrow_schema(out_type)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        # One registry per partition: its UUID cache (and the codec's parsed-schema
        # cache) resolves each schema once per partition, not once per record.
        registry = FileRegistry(registry_dir)
        yield from decode_batches(batches, spec, registry, arrow_schema)

    decoded = envelope_lines(lines).mapInArrow(run, out_type)  # type: ignore[arg-type]
    return decoded.select("*", F.to_timestamp("_arrival").alias("_arrival_ts"))
