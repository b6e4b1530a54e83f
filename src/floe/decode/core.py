"""Decode landed stream files inside Spark: file bytes -> envelope -> frame -> record.

Shape of the work (docs/decisions/0010-ingestion-for-real-producers.md, docs/feeds.md):

* the driver cuts the batch's files into **pieces** (whole files, or 8 MiB-aligned
  ranges of big ones) and groups them into about equal tasks, a multiple of Spark's
  default parallelism, so every core (every executor, on a cluster) gets a share;
* each task runs in a Python worker (``mapInArrow`` over the task list): it reads its
  pieces' bytes itself, splits lines, parses envelopes with orjson, decodes records
  (:mod:`floe.decode.records`), builds the output columns directly in Arrow and
  writes them as Parquet into the pass's staging folder — the decoded rows never
  travel through the JVM on their way to the staging folder;
* what comes back to Spark, and then to the driver, is one small row per piece:
  records in / decoded / quarantined, the good rows' sequence number range, the
  piece's block checksums and whether the file changed while it was read.

The raw rows, the quarantine rows and the per-file counts are all read from the
staging folder (:func:`read_staged`). Every input line yields exactly one staged
row: either ``record`` is set, or ``error_code`` / ``error_detail`` say why not.

Streaming micro-batches arrive as lines already (Spark's file source read them):
:func:`stage_lines` runs the same decoder over them.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import struct
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path
from typing import TYPE_CHECKING, Any

from floe.decode.records import (
    BAD_ENVELOPE,
    CAST_FAILURE,
    DecodeLimits,
    RecordDecoder,
    StreamSpec,
    decode_lines_batch,
    to_record_batch,
)

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import Column, DataFrame, SparkSession
    from pyspark.sql.types import StructType

    from floe.registry.backends import RegistryRef

__all__ = [
    "BAD_ENVELOPE",
    "CAST_FAILURE",
    "HASH_BLOCK",
    "PASSTHROUGH",
    "DecodeLimits",
    "PieceCounts",
    "SourceFile",
    "StreamSpec",
    "decode_output_schema",
    "file_change",
    "jvm_versions",
    "plan_tasks",
    "read_staged",
    "stage_files",
    "stage_lines",
]

# Per-file columns the decode carries through unchanged (the stream kind's file attributes).
PASSTHROUGH = ("ingest_year", "ingest_month", "ingest_day", "ingest_hour")
# Checksums are taken per 8 MiB block of a file; pieces are cut at block boundaries,
# so a file's checksum does not depend on how a batch was split.
HASH_BLOCK = 8 * 1024 * 1024
WHILE_READ = "while it was read"
MIN_TASK_BYTES = 4 * 1024 * 1024  # below this, one task does not pay for itself
BATCH_ROWS = 8192  # lines decoded and converted to Arrow together
ROW_GROUP_ROWS = 65536  # rows per staged Parquet row group


@dataclass(frozen=True)
class SourceFile:
    """A file to decode, as discovery saw it: path, identity (``key``: what its rows'
    ``_source_file`` say), size, modification time and per-file columns (PASSTHROUGH)."""

    path: Path
    key: str
    size: int
    mtime_ns: int
    attrs: Mapping[str, Any] = field(default_factory=dict)


def file_change(path: str | Path, size: int, mtime_ns: int, when: str) -> str | None:
    """Why the file at ``path`` is no longer ``size`` bytes modified at ``mtime_ns``
    (removed, resized, modified) ``when`` (e.g. "while it was read"), or None."""
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        return f"removed {when}"
    if stat.st_size != size:
        return f"size changed from {size} to {stat.st_size} bytes {when}"
    if stat.st_mtime_ns != mtime_ns:
        return f"modified {when}"
    return None


def _nullable(data_type: Any) -> Any:
    """``data_type`` with every nested field nullable: a quarantined row has no record."""
    from pyspark.sql import types as T

    if isinstance(data_type, T.StructType):
        return T.StructType(
            [T.StructField(f.name, _nullable(f.dataType), True, f.metadata) for f in data_type]
        )
    if isinstance(data_type, T.ArrayType):
        return T.ArrayType(_nullable(data_type.elementType), True)
    if isinstance(data_type, T.MapType):
        return T.MapType(data_type.keyType, _nullable(data_type.valueType), True)
    return data_type


def decode_output_schema(record_type: StructType) -> StructType:
    """One staged row per landed line.

    Only what the tables need is kept: the envelope's base64 text and the frame
    bytes are set for quarantined rows only (``raw_data`` / ``raw_bytes``), so a good
    row carries its metadata and its typed record and nothing else. ``_offset`` is the
    line's byte offset in its file (its row index in a streaming micro-batch): with
    the file it orders redeliveries.
    """
    from pyspark.sql import types as T

    return T.StructType(
        [
            T.StructField("_source_file", T.StringType()),
            T.StructField("_offset", T.LongType()),
            T.StructField("_sequence_number", T.StringType()),
            T.StructField("_partition_key", T.StringType()),
            T.StructField("_arrival", T.StringType()),
            *(T.StructField(name, T.IntegerType()) for name in PASSTHROUGH),
            T.StructField("_schema_version", T.IntegerType()),
            T.StructField("record", _nullable(record_type)),
            T.StructField("error_code", T.StringType()),
            T.StructField("error_detail", T.StringType()),
            T.StructField("raw_data", T.StringType()),
            T.StructField("raw_bytes", T.BinaryType()),
        ]
    )


COUNTS_DDL = (
    "part string, _source_file string, start bigint, `end` bigint, records_in bigint, "
    "decoded bigint, quarantined bigint, min_seq string, max_seq string, blocks string, "
    "changed string, unique_seq boolean"
)


@dataclass(frozen=True)
class PieceCounts:
    """What one piece (a file, or a range of one) held; one row back from a task."""

    part: str
    source_file: str
    start: int
    end: int
    records_in: int
    decoded: int
    quarantined: int
    min_seq: str | None
    max_seq: str | None
    blocks: str | None  # hex sha256 of each HASH_BLOCK of the piece, concatenated
    changed: str | None  # why the file is not what discovery saw, if it is not
    # No two of the piece's good rows share a sequence number, known without a
    # shuffle: each decoder saw them strictly increasing in line order (code points,
    # as Spark compares strings), and the two decoders' ranges do not overlap
    # (stream_dedup's shortcut). False when not known.
    unique_seq: bool = False


# --------------------------------------------------------------------------- planning


def plan_tasks(
    files: Sequence[SourceFile], split_bytes: int, parallelism: int
) -> list[list[dict[str, Any]]]:
    """Cut ``files`` into pieces and group them into about equal tasks.

    The number of tasks is a multiple of ``parallelism`` (so two cores get two equal
    halves, not 3 tasks of 64 MiB against 2) unless the input is too small to pay for
    more than one task; a piece is a whole file or an ``HASH_BLOCK``-aligned range.
    Every file gets at least one piece, an empty file too (its counts are zeros).
    """
    total = sum(f.size for f in files)
    tasks = max(1, -(-total // max(split_bytes, HASH_BLOCK)))
    if total >= MIN_TASK_BYTES * 2:
        tasks = max(tasks, min(parallelism, total // MIN_TASK_BYTES))
        tasks = -(-tasks // parallelism) * parallelism if tasks > 1 else 1
    per_task = -(-total // tasks)
    target = max(HASH_BLOCK, -(-per_task // HASH_BLOCK) * HASH_BLOCK)
    plan: list[list[dict[str, Any]]] = [[]]
    filled = 0
    for index, f in enumerate(files):
        start = 0
        while True:
            room = target - filled
            if plan[-1] and room < min(HASH_BLOCK, f.size - start) and len(plan) < tasks:
                plan.append([])  # this task is full: do not cut a sliver for it
                filled, room = 0, target
            if f.size - start <= room or len(plan) >= tasks:
                end = f.size
            else:
                end = min(f.size, start + max(HASH_BLOCK, room // HASH_BLOCK * HASH_BLOCK))
            plan[-1].append(
                {
                    "file": index,
                    "path": str(f.path),
                    "key": f.key,
                    "start": start,
                    "end": end,
                    "size": f.size,
                    "mtime_ns": f.mtime_ns,
                    "attrs": {n: f.attrs.get(n) for n in PASSTHROUGH},
                }
            )
            filled += end - start
            if end >= f.size:
                break
            start = end
    return [task for task in plan if task]


# --------------------------------------------------------------------------- reading


def piece_lines(
    path: str, start: int, end: int, size: int, max_line: int
) -> tuple[list[tuple[int, Any, int]], list[bytes]]:
    """Lines starting in ``[start, end)`` of the first ``size`` bytes of ``path``.

    Returns ``(offset, line, length)`` triples (``line`` the bytes without the newline;
    the decode refuses those longer than ``max_line``) and the sha256 digests of the
    piece's ``HASH_BLOCK`` blocks.
    Never reads past ``size`` (what discovery saw), nor more than ``max_line`` bytes of
    a line that continues past ``end``.
    """
    end = min(end, size)
    with open(path, "rb") as f:
        skip_first = False
        if start > 0:
            f.seek(start - 1)
            skip_first = f.read(1) != b"\n"  # starts mid-line: that line is the previous piece's
        f.seek(start)
        data = f.read(end - start)
        blocks = [
            hashlib.sha256(data[b : b + HASH_BLOCK]).digest()
            for b in range(0, len(data), HASH_BLOCK)
        ] or ([hashlib.sha256(b"").digest()] if start == 0 else [])
        tail = b""
        last_newline = data.rfind(b"\n")
        if end < size and last_newline != len(data) - 1:
            # The last line continues past the piece: read it to its end (capped).
            chunks = []
            have = 0
            while end + have < size and have <= max_line:
                chunk = f.read(min(1 << 20, size - end - have))
                if not chunk:
                    break
                cut = chunk.find(b"\n")
                if cut >= 0:
                    chunks.append(chunk[:cut])
                    have += cut
                    break
                chunks.append(chunk)
                have += len(chunk)
            tail = b"".join(chunks)
    if tail:
        data = data + tail
    # split + accumulate run in C; one comprehension builds the triples. A line of a
    # lone "\r" is blank (Spark's reader splits CRLF too); a trailing "\r" is JSON
    # whitespace, which the envelope parser accepts.
    parts = data.split(b"\n")
    lengths = list(map(len, parts))
    ends = list(accumulate(lengths))
    first = 1 if skip_first else 0
    lines = [
        (start + stop - n + i, parts[i], n)
        for i, n, stop in zip(range(first, len(parts)), lengths[first:], ends[first:], strict=True)
        if n and (n > 1 or parts[i] != b"\r")
    ]
    return lines, blocks


# --------------------------------------------------------------------------- workers

_DECODERS: dict[tuple[Any, ...], RecordDecoder] = {}


def _decoder(spec: StreamSpec, ref: RegistryRef, limits: DecodeLimits) -> RecordDecoder:
    """This process's decoder for the stream (its header cache outlives one task)."""
    key = (spec.name, spec.schema, tuple(sorted(spec.timestamps.items())), ref, limits)
    decoder = _DECODERS.get(key)
    if decoder is None:
        decoder = RecordDecoder(spec, ref.open(), limits)
        _DECODERS[key] = decoder
    return decoder


class _StagedWriter:
    """Appends Arrow batches to one Parquet file, published atomically on close.

    The name is fixed by the task (its first piece, or partition), so a retried task
    replaces what a failed attempt wrote instead of adding to it.
    """

    def __init__(self, folder: str, name: str, schema: pa.Schema) -> None:
        self.path = os.path.join(folder, f"{name}.parquet")
        self.tmp = os.path.join(folder, f".{name}.{uuid.uuid4().hex}.tmp")
        self.schema = schema
        self.pending: list[pa.RecordBatch] = []
        self.rows = 0
        self.writer: Any = None

    def write(self, batch: pa.RecordBatch) -> None:
        self.pending.append(batch)
        self.rows += batch.num_rows
        if self.rows >= ROW_GROUP_ROWS:
            self._flush()

    def _flush(self) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        if self.writer is None:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            self.writer = pq.ParquetWriter(self.tmp, self.schema, compression="snappy")
        if self.pending:
            self.writer.write_table(pa.Table.from_batches(self.pending, schema=self.schema))
        self.pending, self.rows = [], 0

    def close(self) -> None:
        self._flush()
        self.writer.close()
        os.replace(self.tmp, self.path)


class _Tally:
    """Per-piece counts while its batches are decoded."""

    def __init__(self) -> None:
        self.records_in = self.decoded = self.quarantined = 0
        self.min_seq: str | None = None
        self.max_seq: str | None = None
        self.last_seq: str | None = None
        self.ordered = True

    def stage(
        self,
        lines: Sequence[tuple[int, Any, int]],
        piece: dict[str, Any],
        decoder: RecordDecoder,
        writer: _StagedWriter,
        schema: pa.Schema,
    ) -> None:
        """Decode ``lines`` of ``piece`` in batches into ``writer``, counting them."""
        fixed = {"_source_file": piece["key"], **piece["attrs"]}
        for at in range(0, len(lines), BATCH_ROWS):
            cols = decode_lines_batch(lines[at : at + BATCH_ROWS], decoder)
            writer.write(to_record_batch(cols, schema, fixed))
            self.add(cols.codes, cols.envelope["_sequence_number"])

    def row(
        self, part: str, piece: dict[str, Any], blocks: str | None, changed: str | None
    ) -> dict[str, Any]:
        """The count row (COUNTS_DDL) of ``piece``'s lines counted here."""
        return {
            "part": part,
            "_source_file": piece["key"],
            "start": piece["start"],
            "end": piece["end"],
            "records_in": self.records_in,
            "decoded": self.decoded,
            "quarantined": self.quarantined,
            "min_seq": self.min_seq,
            "max_seq": self.max_seq,
            "blocks": blocks,
            "changed": changed,
            "unique_seq": self.ordered,
        }

    def add(self, codes: list[Any], seqs: list[Any]) -> None:
        self.records_in += len(codes)
        good = [s for c, s in zip(codes, seqs, strict=True) if c is None and s is not None]
        bad = sum(1 for c in codes if c is not None)
        self.quarantined += bad
        self.decoded += len(codes) - bad
        if good:
            lo, hi = min(good), max(good)
            self.min_seq = lo if self.min_seq is None else min(self.min_seq, lo)
            self.max_seq = hi if self.max_seq is None else max(self.max_seq, hi)
            if self.ordered:
                last = self.last_seq
                for seq in good:
                    if last is not None and seq <= last:
                        self.ordered = False
                        break
                    last = seq
            self.last_seq = good[-1]


def _stage_pieces(
    batches: Iterator[pa.RecordBatch],
    spec: StreamSpec,
    ref: RegistryRef,
    limits: DecodeLimits,
    folder: str,
    schema: pa.Schema,
) -> Iterator[pa.RecordBatch]:
    """mapInArrow: tasks (one JSON row each) -> staged Parquet + count rows.

    A task is a list of pieces to read, or ``{"piece", "lines"}``: the lines of one
    piece the JVM decoder left for Python (:func:`_stage_files_jvm`).
    """
    import pyarrow as pa

    decoder = _decoder(spec, ref, limits)
    counts: list[dict[str, Any]] = []
    for batch in batches:
        for text in batch.column("task").to_pylist():
            task = json.loads(text)
            if isinstance(task, dict):
                piece = task["piece"]
                name = f"fallback-{piece['file']:06d}-{piece['start']:015d}"
                writer = _StagedWriter(folder, name, schema)
                tally = _Tally()
                tally.stage(_fallback_lines(task["lines"]), piece, decoder, writer, schema)
                counts.append(tally.row(name, piece, None, None))
            else:
                first = task[0]
                name = f"part-{first['file']:06d}-{first['start']:015d}"
                writer = _StagedWriter(folder, name, schema)
                for piece in task:
                    counts.append(_stage_piece(piece, decoder, writer, schema, name))
            writer.close()
    yield pa.RecordBatch.from_pylist(counts, schema=_counts_arrow())


def _stage_piece(
    piece: dict[str, Any],
    decoder: RecordDecoder,
    writer: _StagedWriter,
    schema: pa.Schema,
    part: str,
) -> dict[str, Any]:
    path, size, mtime = piece["path"], piece["size"], piece["mtime_ns"]
    changed = file_change(path, size, mtime, WHILE_READ)
    tally = _Tally()
    blocks: list[bytes] = []
    if changed is None:
        lines, blocks = piece_lines(
            path, piece["start"], piece["end"], size, decoder.limits.max_line_bytes
        )
        tally.stage(lines, piece, decoder, writer, schema)
        del lines
        changed = file_change(path, size, mtime, WHILE_READ)
    return tally.row(part, piece, b"".join(blocks).hex(), changed)


def _counts_arrow() -> pa.Schema:
    import pyarrow as pa

    text, whole = pa.string(), pa.int64()
    return pa.schema(
        [
            ("part", text),
            ("_source_file", text),
            ("start", whole),
            ("end", whole),
            ("records_in", whole),
            ("decoded", whole),
            ("quarantined", whole),
            ("min_seq", text),
            ("max_seq", text),
            ("blocks", text),
            ("changed", text),
            ("unique_seq", pa.bool_()),
        ]
    )


def _stage_line_batches(
    batches: Iterator[pa.RecordBatch],
    spec: StreamSpec,
    ref: RegistryRef,
    limits: DecodeLimits,
    folder: str,
    schema: pa.Schema,
) -> Iterator[pa.RecordBatch]:
    """mapInArrow: lines of a streaming micro-batch -> staged Parquet + count rows."""
    import pyarrow as pa
    from pyspark import TaskContext

    decoder = _decoder(spec, ref, limits)
    context = TaskContext.get()
    name = f"lines-{context.partitionId() if context else 0:06d}"
    writer = _StagedWriter(folder, name, schema)
    tallies: dict[str, _Tally] = {}
    row = 0
    for batch in batches:
        texts = batch.column("_line").to_pylist()
        files = batch.column("_source_file").to_pylist()
        attrs = {n: batch.column(n).to_pylist() for n in PASSTHROUGH}
        lines = []
        for text in texts:
            raw = (text or "").encode("utf-8", "surrogatepass")
            lines.append((row, raw[: limits.max_line_bytes + 1], len(raw)))
            row += 1
        cols = decode_lines_batch(lines, decoder)
        per_row = {"_source_file": files, **attrs}
        writer.write(to_record_batch(cols, schema, {}, per_row))
        for i, key in enumerate(files):
            tally = tallies.setdefault(key, _Tally())
            tally.add(cols.codes[i : i + 1], cols.envelope["_sequence_number"][i : i + 1])
    writer.close()
    counts = [
        {
            "part": name,
            "_source_file": key,
            "start": 0,
            "end": 0,
            "records_in": t.records_in,
            "decoded": t.decoded,
            "quarantined": t.quarantined,
            "min_seq": t.min_seq,
            "max_seq": t.max_seq,
            "blocks": None,
            "changed": None,
            "unique_seq": t.ordered,
        }
        for key, t in tallies.items()
    ]
    yield pa.RecordBatch.from_pylist(counts, schema=_counts_arrow())


# --------------------------------------------------------------------------- Spark


def _arrow_schema(record_type: StructType) -> pa.Schema:
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(decode_output_schema(record_type))


def _collect_counts(df: DataFrame) -> list[PieceCounts]:
    return [
        PieceCounts(
            r["part"],
            r["_source_file"],
            r["start"],
            r["end"],
            r["records_in"],
            r["decoded"],
            r["quarantined"],
            r["min_seq"],
            r["max_seq"],
            r["blocks"],
            r["changed"],
            bool(r["unique_seq"]),
        )
        for r in df.collect()
    ]


def stage_files(
    spark: SparkSession,
    files: Sequence[SourceFile],
    spec: StreamSpec,
    record_type: StructType,
    ref: RegistryRef,
    limits: DecodeLimits,
    staging: Path,
    split_bytes: int,
    jvm: str | None = None,
) -> list[PieceCounts]:
    """Decode ``files`` into Parquet under ``staging``; the per-piece counts.

    The files are read by Python workers (paths as discovered, so a file's identity
    is exactly its ledger key); only the small count rows reach the driver. With
    ``jvm`` (:func:`jvm_versions`), the JVM decoder reads them and leaves to the Python
    workers only the lines it is not sure of.
    """
    staging.mkdir(parents=True, exist_ok=True)
    plan = plan_tasks(files, split_bytes, spark.sparkContext.defaultParallelism)
    if jvm is not None:
        return _stage_files_jvm(spark, plan, jvm, spec, record_type, ref, limits, staging)
    return _run_tasks(spark, plan, len(plan), spec, record_type, ref, limits, staging)


def _run_tasks(
    spark: SparkSession,
    tasks: Sequence[Any],
    slices: int,
    spec: StreamSpec,
    record_type: StructType,
    ref: RegistryRef,
    limits: DecodeLimits,
    staging: Path,
) -> list[PieceCounts]:
    """Python workers run ``tasks`` (:func:`_stage_pieces`) in ``slices`` Spark tasks;
    their count rows."""
    from pyspark.sql.types import StringType, StructField, StructType

    schema = _arrow_schema(record_type)
    folder = str(staging)
    rdd = spark.sparkContext.parallelize([(json.dumps(t),) for t in tasks], slices)
    frame = spark.createDataFrame(rdd, StructType([StructField("task", StringType())]))

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        return _stage_pieces(batches, spec, ref, limits, folder, schema)

    return _collect_counts(frame.mapInArrow(run, COUNTS_DDL))  # type: ignore[arg-type]


def stage_lines(
    lines: DataFrame,
    spec: StreamSpec,
    record_type: StructType,
    ref: RegistryRef,
    limits: DecodeLimits,
    staging: Path,
) -> list[PieceCounts]:
    """Decode a DataFrame of ``_line, _source_file, ingest_*`` into Parquet under ``staging``."""
    staging.mkdir(parents=True, exist_ok=True)
    schema = _arrow_schema(record_type)
    folder = str(staging)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        return _stage_line_batches(batches, spec, ref, limits, folder, schema)

    source = lines.select("_line", "_source_file", *PASSTHROUGH)
    return _collect_counts(source.mapInArrow(run, COUNTS_DDL))  # type: ignore[arg-type]


def read_staged(spark: SparkSession, staging: Path, record_type: StructType) -> DataFrame:
    """The staged rows of a pass, with ``_arrival_ts`` (the envelope's arrival time)."""
    staged = spark.read.schema(decode_output_schema(record_type)).parquet(str(staging))
    return staged.select("*", arrival_timestamp(spark, "_arrival").alias("_arrival_ts"))


ARRIVAL_CLASS = "floe.jvm.Arrival"
ARRIVAL_FUNCTION = "floe_arrival_micros"


def arrival_timestamp(spark: SparkSession, column: str) -> Column:
    """``to_timestamp(column)``: the same answers (NULL for text it cannot read).

    With floe's jar in the session, Kinesis's one shape of arrival time is read from
    its digits by a JVM function (floe.jvm.Arrival), any other text by Spark's own
    parser there: Spark's general parser was the costliest expression of copying a
    pass's rows into ``raw.<feed>`` (docs/decisions/0065-staging-and-arrival-times.md).
    """
    from pyspark.sql import functions as F

    from floe.runtime.jars import jvm_class, register_jvm_udf

    arrival = jvm_class(spark, ARRIVAL_CLASS)
    if arrival is None:
        return F.to_timestamp(column)
    zone = spark.conf.get("spark.sql.session.timeZone")
    register_jvm_udf(spark, ARRIVAL_FUNCTION, arrival.udf(zone), "LongType")
    return F.timestamp_micros(F.call_udf(ARRIVAL_FUNCTION, F.col(column)))


# --------------------------------------------------------------------------- JVM fast path

JVM_CLASS = "floe.jvm.StageDecode"
_FALLBACK_RECORD = struct.Struct(">qqi")  # offset, length, kept bytes (StageDecode.writeFallback)


def jvm_versions(spec: StreamSpec, versions: Sequence[Any]) -> str | None:
    """The versions of ``spec``'s schema the JVM fast path may decode, as its JSON
    (``{uuid: {"number", "schema", "format"}}``), or None when none may (Protobuf, a
    stream with timestamp casts, a definition fastavro or fastjsonschema does not take).

    The JVM decoder decides per version again whether it reads that shape exactly as
    fastavro (or orjson and fastjsonschema) and Arrow do; a version it declines leaves
    its records to Python.
    """
    from floe.registry import codec

    if spec.timestamps:
        return None
    out: dict[str, dict[str, Any]] = {}
    for version in versions:
        if version.data_format not in ("AVRO", "JSON") or version.name != spec.schema:
            continue
        try:
            if version.data_format == "AVRO":
                codec._avro_schema(version.definition)
            else:
                codec._json_validator(version.definition)
        except Exception:  # the Python path reports it per record
            continue
        out[str(version.uuid)] = {
            "number": version.version_number,
            "schema": version.definition,
            "format": version.data_format,
        }
    return json.dumps(out, sort_keys=True) if out else None


def jvm_available(spark: SparkSession) -> bool:
    """Whether the session's JVM has floe's decoder jar (``floe dev build-jvm``)."""
    from floe.runtime.jars import jvm_class

    return jvm_class(spark, JVM_CLASS) is not None


def _fallback_lines(path: str) -> list[tuple[int, bytes, int]]:
    """The ``(offset, line, length)`` triples StageDecode left for the Python decoder."""
    with open(path, "rb") as f:
        data = f.read()
    lines = []
    at, size = 0, _FALLBACK_RECORD.size
    while at < len(data):
        offset, length, kept = _FALLBACK_RECORD.unpack_from(data, at)
        at += size
        lines.append((offset, data[at : at + kept], length))
        at += kept
    return lines


def _merge(jvm: PieceCounts, python: PieceCounts | None) -> PieceCounts:
    """A piece's counts: the JVM's lines and the Python decoder's, added."""
    if python is None:
        return jvm
    lows = [s for s in (jvm.min_seq, python.min_seq) if s is not None]
    highs = [s for s in (jvm.max_seq, python.max_seq) if s is not None]
    return PieceCounts(
        jvm.part,
        jvm.source_file,
        jvm.start,
        jvm.end,
        jvm.records_in + python.records_in,
        jvm.decoded + python.decoded,
        jvm.quarantined + python.quarantined,
        min(lows) if lows else None,
        max(highs) if highs else None,
        jvm.blocks,
        jvm.changed,
        jvm.unique_seq
        and python.unique_seq
        and (
            None in (jvm.max_seq, python.min_seq, python.max_seq, jvm.min_seq)
            or str(jvm.max_seq) < str(python.min_seq)
            or str(python.max_seq) < str(jvm.min_seq)
        ),
    )


def _stage_files_jvm(
    spark: SparkSession,
    plan: list[list[dict[str, Any]]],
    versions: str,
    spec: StreamSpec,
    record_type: StructType,
    ref: RegistryRef,
    limits: DecodeLimits,
    staging: Path,
) -> list[PieceCounts]:
    """The JVM reads and decodes every piece; the lines it is not sure of go to Python.

    StageDecode writes its rows with Spark's Parquet writer into a hidden folder of the
    pass (moved into the pass once the job succeeded: a failed job leaves nothing the
    pass reads) and one file of left lines per piece; the Python job decodes those.
    """
    from floe.runtime.jars import jvm_class

    out, left = staging / "_jvm", staging / "_fallback"
    decoder = jvm_class(spark, JVM_CLASS)
    assert decoder is not None, "stage_files(jvm=...) without floe's jar in the session"
    texts = decoder.stage(
        spark._jsparkSession,
        json.dumps(plan),
        versions,
        decode_output_schema(record_type).json(),
        limits.max_line_bytes,
        limits.max_record_bytes,
        limits.max_inflated_bytes,
        limits.max_depth,
        str(out),
        str(left),
    )
    for name in sorted(os.listdir(out)):
        if name.startswith("part-") and name.endswith(".parquet"):
            os.replace(out / name, staging / f"jvm-{name}")
    shutil.rmtree(out, ignore_errors=True)
    jvm_counts: dict[tuple[int, int], PieceCounts] = {}
    tasks = []
    pieces = {(p["file"], p["start"]): p for task in plan for p in task}
    for text in texts:
        row = json.loads(text)
        key = (row.pop("file"), row["start"])
        fallback = row.pop("fallback")
        row["source_file"] = row.pop("_source_file")
        jvm_counts[key] = PieceCounts(**row)
        if fallback:
            piece = pieces[key]
            lines = left / f"{piece['file']:06d}-{piece['start']:015d}.lines"
            tasks.append({"piece": piece, "lines": str(lines)})
    python: dict[tuple[str, int], PieceCounts] = {}
    if tasks:
        slices = min(len(tasks), spark.sparkContext.defaultParallelism)
        for counts in _run_tasks(spark, tasks, slices, spec, record_type, ref, limits, staging):
            python[(counts.source_file, counts.start)] = counts
    shutil.rmtree(left, ignore_errors=True)
    return [_merge(c, python.get((c.source_file, c.start))) for _, c in sorted(jvm_counts.items())]
