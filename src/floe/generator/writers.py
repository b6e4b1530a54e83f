"""Demo writers: a feed kind's deterministic demo files, in the kind's landing layout.

One writer per kind (:data:`WRITERS`); each draws its content from ``meta.floe.demo``
(a ``module.attribute`` of :mod:`floe.generator.demo`) or from the declaration
(:mod:`floe.generator.synth`), and lays it out with the kind's own layout helpers: the
generator imports the kinds, never the other way round (docs/feeds.md).
"""

from __future__ import annotations

import base64
import contextlib
import csv
import io
import json
import random
import re
import tempfile
import uuid
import zlib
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from floe.feeds.declarations import Feed, FeedError
from floe.feeds.kinds import csv_loads, dms, reference, stream
from floe.generator.base import GenerateOptions, WriteReport, manifest_bytes, write_landed
from floe.generator.demo import customers, insurance, sports, streams
from floe.generator.demo import reference as reference_demos
from floe.generator.synth import (
    StreamDemo,
    arrow_type,
    csv_loads_demo,
    dms_demo,
    flagged_csv_demo,
    reference_demo,
    stream_demo,
)
from floe.registry import codec, wire
from floe.registry.backends import SchemaVersion
from floe.registry.sync import schemas_dir, sync_local_registry

_DEMO_NAME = re.compile(r"^[a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*$")
# ``meta.floe.demo: <module>.<attribute>``: the modules of floe.generator.demo.
DEMO_MODULES = {
    "customers": customers,
    "insurance": insurance,
    "reference": reference_demos,
    "sports": sports,
    "streams": streams,
}


def demo_maker(feed: Feed, kind_default: Callable[..., Any] | None = None) -> Any:
    """The demo content named by ``meta.floe.demo`` (``module.attribute`` under
    ``floe.generator.demo``), or ``kind_default`` (schema-driven content) when unset."""
    name = feed.option("demo")
    if name is None:
        if kind_default is None:
            raise FeedError(f"feed {feed.id}: no demo content for kind {feed.kind}")
        return kind_default
    if not isinstance(name, str) or not _DEMO_NAME.match(name):
        raise FeedError(f"feed {feed.id}: demo {name!r} must look like 'module.attribute'")
    module_name, attribute = name.split(".")
    try:
        return getattr(DEMO_MODULES[module_name], attribute)
    except (KeyError, AttributeError) as exc:
        raise FeedError(f"feed {feed.id}: demo {name!r} is not in floe.generator.demo") from exc


def csv_bytes(header: Sequence[str] | None, rows: Sequence[Sequence[str]]) -> bytes:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    if header:
        writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue().encode()


def write_csv_loads(feed: Feed, opts: GenerateOptions, report: WriteReport) -> None:
    """Write the feed's demo loads: each load's CSV, then its manifest (a complete load)."""

    maker = demo_maker(feed, csv_loads_demo)
    for load in maker(feed, opts):
        header = csv_loads.header_for(feed, load.kind)
        rows = [[row.get(name, "") for name in header] for row in load.rows]
        folder = opts.landing / feed.landing / f"load_date={load.load_date.isoformat()}"
        write_landed(folder / "part-00000.csv", csv_bytes(header, rows), report)
        # The manifest last: it declares a complete load.
        write_landed(folder / csv_loads.MANIFEST, manifest_bytes(load.kind), report)


def parquet_bytes(columns: Sequence[tuple[str, str]], rows: list[dict]) -> bytes:
    """A Parquet file of ``rows`` with ``columns`` (name, Spark SQL type)."""
    # Function-local: pyarrow is heavy, and only the dms writer needs it.
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([pa.field(name, arrow_type(typ)) for name, typ in columns])
    table = pa.Table.from_pylist(rows, schema=schema)
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="snappy")
    return buf.getvalue()


def write_dms(feed: Feed, opts: GenerateOptions, report: WriteReport) -> None:
    """Day 0: one full-load file; each later day: one CDC file (op column first)."""

    maker = demo_maker(feed, dms_demo)
    folder = opts.landing / feed.landing
    op, ts = dms.op_column(feed), dms.timestamp_column(feed)
    for day in maker(feed, opts).days():
        if day.full:
            cols = [*day.columns, (ts, "timestamp_ntz")]
            name = "LOAD00000001.parquet"
        else:
            cols = [(op, "string"), *day.columns, (ts, "timestamp_ntz")]
            name = f"{day.load_date:%Y%m%d}-{day.captured:%H%M%S}000.parquet"
        write_landed(folder / name, parquet_bytes(cols, day.rows), report)


def write_flagged_csv(feed: Feed, opts: GenerateOptions, report: WriteReport) -> None:
    """Day 0: ``full/full-load-<yyyymmdd>.csv``; later days: ``cdc/cdc-load-<yyyymmdd>.csv``."""

    maker = demo_maker(feed, flagged_csv_demo)
    header = [name for name, _ in feed.column_types()]
    root = opts.landing / feed.landing
    for load_date, full, rows in maker(feed, opts).days():
        if full:
            path = root / "full" / f"full-load-{load_date:%Y%m%d}.csv"
            write_landed(path, csv_bytes(header, rows), report)
        else:
            path = root / "cdc" / f"cdc-load-{load_date:%Y%m%d}.csv"
            write_landed(path, csv_bytes(None, rows), report)


def write_reference(feed: Feed, opts: GenerateOptions, report: WriteReport) -> None:
    """One extract per change day, then the change flag when anything new landed."""

    maker = demo_maker(feed, reference_demo)
    header = [name for name, _ in feed.column_types()]
    folder = opts.landing / feed.landing
    before = len(report.written)
    for load_date, rows in maker(feed, opts):
        path = folder / f"{feed.name}_{load_date.isoformat()}.csv"
        write_landed(path, csv_bytes(header, rows), report)
    if len(report.written) > before:
        flag = reference.change_flag(feed, opts.landing)
        flag.write_bytes(b"")
        report.written.append(flag)


@contextlib.contextmanager
def _registry_state(opts: GenerateOptions) -> Iterator[Path]:
    """Where the writer syncs the local registry: the lakehouse's state when given, else a
    scratch folder (UUIDs are derived from the definitions: the same either way)."""
    if opts.state_dir is not None:
        yield opts.state_dir
        return
    with tempfile.TemporaryDirectory(prefix="floe-registry-") as scratch:
        yield Path(scratch)


HOURS = (0, 6, 12, 18)  # ingest hours with a file per stream per demo day
COMPRESSED_SHARE = 0.05
WIRE_CLASSES = ("bad_base64", "bad_header", "bad_zlib", "unknown_schema")
AVRO_CLASSES = ("avro_decode",)
JSON_CLASSES = ("json_parse", "schema_violation", "cast_failure")


def records_per_file(scale: int) -> int:
    """~scale/4 records per stream per day (hundreds at scale 1000), spread over HOURS."""
    return max(3, scale // (4 * len(HOURS)))


def bad_classes(data_format: str, demo: StreamDemo) -> tuple[str, ...]:
    """Failure classes a stream's demo data exhibits (Avro vs JSON payload classes differ)."""
    if data_format == "AVRO":
        return WIRE_CLASSES + AVRO_CLASSES
    payload = ["json_parse"]
    if demo.violation_field:
        payload.append("schema_violation")
    if demo.cast_failure:
        payload.append("cast_failure")
    return WIRE_CLASSES + tuple(payload)


def _broken(
    kind: str, demo: StreamDemo, record: dict, version: SchemaVersion, rng: random.Random
) -> str:
    """The landed ``data`` text of a record broken in the ``kind`` way."""
    good = codec.frame(record, version)
    if kind == "bad_base64":
        return base64.b64encode(good).decode()[:-3] + "!@#"
    if kind == "bad_header":
        return base64.b64encode(b"\x07" + good[1:]).decode()
    if kind == "bad_zlib":
        body = zlib.compress(codec.encode_payload(record, version))
        framed = bytes((wire.GLUE_HEADER_VERSION, wire.COMPRESSION_ZLIB)) + version.uuid.bytes
        return base64.b64encode(framed + body[: len(body) // 2]).decode()
    if kind == "unknown_schema":
        unknown = uuid.UUID(int=rng.getrandbits(128), version=4)
        return base64.b64encode(good[:2] + unknown.bytes + good[18:]).decode()
    if kind == "avro_decode":
        return base64.b64encode(good[: 18 + max(1, (len(good) - 18) // 3)]).decode()
    if kind == "json_parse":
        payload = codec.encode_payload(record, version)[:-5] + b"{,"
        return base64.b64encode(wire.encode_glue(payload, version.uuid)).decode()
    if kind == "schema_violation" and demo.violation_field:
        payload = json.dumps({**record, demo.violation_field: "not-a-number"}).encode()
        return base64.b64encode(wire.encode_glue(payload, version.uuid)).decode()
    if kind == "cast_failure" and demo.cast_failure:
        # Valid under the JSON Schema, but the raw table's Spark type cannot hold it.
        field_name, value = demo.cast_failure
        return base64.b64encode(codec.frame({**record, field_name: value}, version)).decode()
    raise ValueError(f"unknown failure class {kind!r}")


def write_stream(feed: Feed, demo: StreamDemo, opts: GenerateOptions, report: WriteReport) -> None:
    """Envelopes a file per demo hour; multi-version schemas switch half-way through the days.

    A share ``bad_share`` of records is deliberately broken, cycling through every
    failure class that applies (:func:`bad_classes`); when ``bad_share > 0`` the first
    file carries one record of each class, so small runs cover them all. About 5 % of
    good records are zlib-compressed.
    """
    s = stream.spec(feed)
    with _registry_state(opts) as state_dir:
        registry = sync_local_registry(state_dir, schemas_dir(opts.project()))
        versions = registry.versions(s.schema, s.registry)
    if not versions:
        raise FeedError(f"feed {feed.id}: schema {s.registry}/{s.schema} has no version")
    rng = opts.rng(f"streams/{feed.name}")
    make = demo.make()
    classes = bad_classes(versions[-1].data_format, demo)
    per_file = records_per_file(opts.scale)
    sequence = 49_000_000_000_000_000_000_000_000 + rng.randint(0, 10**6) * 10**12
    i = 0
    forced = list(classes) if opts.bad_share > 0 else []
    bad_cycle = 0
    for day_index, day in enumerate(opts.load_dates()):
        version = versions[0] if day_index < max(1, opts.days // 2) else versions[-1]
        for hour in HOURS:
            hour_start = datetime(day.year, day.month, day.day, hour)
            lines = []
            for n in range(per_file):
                i += 1
                sequence += rng.randint(1, 10**6)
                ts = hour_start + timedelta(seconds=int(n * 3600 / per_file) + rng.randint(0, 2))
                record = make(rng, i, ts, version.version_number)
                if forced:
                    kind = forced.pop(0)
                elif rng.random() < opts.bad_share:
                    kind, bad_cycle = classes[bad_cycle % len(classes)], bad_cycle + 1
                else:
                    kind = None
                if kind is None:
                    framed = codec.frame(record, version, compress=rng.random() < COMPRESSED_SHARE)
                    data = base64.b64encode(framed).decode()
                else:
                    data = _broken(kind, demo, record, version, rng)
                envelope = {
                    "sequenceNumber": str(sequence),
                    "partitionKey": f"key-{i % 16}",
                    "approximateArrivalTimestamp": ts.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
                    "data": data,
                }
                lines.append(json.dumps(envelope, separators=(",", ":")))
            body = ("\n".join(lines) + "\n").encode()
            write_landed(stream.stream_path(opts.landing, feed, hour_start), body, report)


def write_stream_feed(feed: Feed, opts: GenerateOptions, report: WriteReport) -> None:
    """The stream's demo files (content: ``meta.floe.demo`` or drawn from its schema)."""
    write_stream(feed, demo_maker(feed, stream_demo)(feed, opts), opts, report)


Writer = Callable[[Feed, GenerateOptions, WriteReport], None]


# Kind name -> its demo writer; a kind without one has no demo data.
def write_nothing(feed: Feed, opts: GenerateOptions, report: WriteReport) -> None:
    """A broker feed has no demo files: produce its records with ``floe produce``."""


WRITERS: dict[str, Writer] = {
    "csv_loads": write_csv_loads,
    "dms": write_dms,
    "flagged_csv": write_flagged_csv,
    "kafka": write_nothing,
    "kinesis": write_nothing,
    "reference": write_reference,
    "stream": write_stream_feed,
}


def write_demo(feed: Feed, opts: GenerateOptions, report: WriteReport) -> None:
    """The demo files of ``feed``; FeedError when its kind has no demo writer."""
    writer = WRITERS.get(feed.kind)
    if writer is None:
        raise FeedError(
            f"feed {feed.id}: kind {feed.kind} has no demo writer (floe.generator.writers)"
        )
    writer(feed, opts, report)
