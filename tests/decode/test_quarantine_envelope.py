"""A quarantined stream record keeps every envelope field that can be read safely.

An operator looks a bad record up by its Kinesis sequence number: a line whose
envelope is JSON but whose ``data`` is missing, a number or an object, a line longer
than the cap (read by a bounded scan of its head) and a line that stops being JSON
after its first members all land in ``raw.quarantine`` with ``_sequence_number`` and
``_partition_key`` (docs/feeds.md, "Hostile input").
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from floe.decode.records import (
    BAD_ENVELOPE,
    LINE_TOO_LONG,
    DecodeLimits,
    RecordDecoder,
    StreamSpec,
    decode_lines_batch,
)
from floe.registry.backends import FileRegistry
from tests.decode import hostile
from tests.helpers import ROOT, feed

MAX_LINE = 4096
LIMITS = DecodeLimits(
    max_line_bytes=MAX_LINE, max_record_bytes=1 << 20, max_inflated_bytes=1 << 20, max_depth=128
)


def _members(*pairs: tuple[str, object]) -> bytes:
    """An envelope with members in the given order (json.dumps keeps it)."""
    return json.dumps(dict(pairs), separators=(",", ":")).encode()


SEQ = ("sequenceNumber", "49590338271490256608559692538361571095921575989136588898")
KEY = ("partitionKey", "key-7")
ARRIVAL = ("approximateArrivalTimestamp", "2022-07-01T00:00:00.000Z")
# label -> (line, code, sequence number, partition key the quarantine row must carry)
LINES: dict[str, tuple[bytes, str, str | None, str | None]] = {
    "data missing": (_members(SEQ, KEY, ARRIVAL), BAD_ENVELOPE, SEQ[1], KEY[1]),
    "data a number": (_members(SEQ, KEY, ("data", 12)), BAD_ENVELOPE, SEQ[1], KEY[1]),
    "data an object": (
        _members(("data", {"sequenceNumber": "inner", "x": [1, "]"]}), SEQ, KEY),
        BAD_ENVELOPE,
        SEQ[1],
        KEY[1],
    ),
    "numeric sequence number": (
        _members(("sequenceNumber", 12345), ("partitionKey", 7), ("data", None)),
        BAD_ENVELOPE,
        "12345",
        "7",
    ),
    "too long, fields first": (
        _members(SEQ, KEY, ("data", "A" * (MAX_LINE * 3))),
        LINE_TOO_LONG,
        SEQ[1],
        KEY[1],
    ),
    "too long, an object and escapes before the fields": (
        _members(
            ("meta", {"note": 'a "quoted" \\ {bracket['}),
            KEY,
            SEQ,
            ("data", "QUFB" * MAX_LINE),
        ),
        LINE_TOO_LONG,
        SEQ[1],
        KEY[1],
    ),
    # The fields after a data string longer than the cap lie beyond the bounded scan;
    # a "sequenceNumber" inside the data string is never taken for the envelope's.
    "too long, fields after the data": (
        _members(("data", '"sequenceNumber":"fake"' + "A" * MAX_LINE), SEQ, KEY),
        LINE_TOO_LONG,
        None,
        None,
    ),
    "JSON until a NaN": (
        _members(SEQ, KEY)[:-1] + b',"x":NaN,"data":"QUFB"}',
        BAD_ENVELOPE,
        SEQ[1],
        KEY[1],
    ),
    "cut in the partition key": (_members(SEQ, KEY)[:-5], BAD_ENVELOPE, SEQ[1], None),
    "not JSON at all": (b"this is not json", BAD_ENVELOPE, None, None),
    "an array": (b"[1,2]", BAD_ENVELOPE, None, None),
}


@pytest.fixture(scope="module")
def decoder(tmp_path_factory: pytest.TempPathFactory) -> RecordDecoder:
    registry = FileRegistry(tmp_path_factory.mktemp("quarantine-reg"))
    return RecordDecoder(StreamSpec("weather", "weather_report"), registry, LIMITS)


def test_quarantined_lines_carry_their_envelope_fields(decoder: RecordDecoder) -> None:
    labels = list(LINES)
    triples = [
        (n, LINES[label][0][: MAX_LINE + 1], len(LINES[label][0])) for n, label in enumerate(labels)
    ]
    cols = decode_lines_batch(triples, decoder)
    got = {
        label: (
            cols.codes[n],
            cols.envelope["_sequence_number"][n],
            cols.envelope["_partition_key"][n],
        )
        for n, label in enumerate(labels)
    }
    want = {label: (code, seq, key) for label, (_, code, seq, key) in LINES.items()}
    assert got == want
    arrival = cols.envelope["_arrival"][labels.index("data missing")]
    assert arrival == ARRIVAL[1]


def test_the_scan_reads_no_further_than_its_limit() -> None:
    from floe.decode.records import scan_envelope_fields

    line = _members(KEY, ("data", "A" * 100), SEQ)
    assert scan_envelope_fields(line, len(line)) == {
        "_partition_key": KEY[1],
        "_sequence_number": SEQ[1],
    }
    assert scan_envelope_fields(line, 120) == {"_partition_key": KEY[1]}
    # a number that reaches the end of what is scanned may be cut: not taken
    numeric = _members(("partitionKey", 123456))
    assert scan_envelope_fields(numeric, len(numeric) - 3) == {}
    assert scan_envelope_fields(b"[" * 100_000, 1 << 20) == {}
    assert scan_envelope_fields(b'{"a":' + b"[" * 100_000, 1 << 20) == {}


def _hour(landing: Path) -> Path:
    folder = (
        landing / "streams/weather/ingest_year=2022/ingest_month=07/ingest_day=01/ingest_hour=00"
    )
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.mark.integration
def test_raw_quarantine_rows_carry_sequence_number_and_partition_key(spark, tmp_path) -> None:
    from floe.feeds.ingest import ingest, reconcile_or_raise
    from floe.runtime import Settings, use_settings

    settings = Settings.from_env(
        {
            "FLOE_HOME": str(tmp_path / "floe"),
            "FLOE_DECODE_MAX_LINE_BYTES": str(MAX_LINE),
            "FLOE_SETTLE_SECONDS": "0",
        }
    )
    use_settings(spark, settings)
    lines = {label: line for label, (line, *_) in LINES.items()}
    lines["cut envelope"] = hostile.envelope("QUFB", 5)[:60]
    (_hour(settings.landing) / "hostile.jsonl").write_bytes(
        b"".join(line + b"\n" for line in lines.values())
    )
    weather = feed("weather")
    result = ingest(spark, weather, raw_exists=False, settings=settings, project_dir=ROOT)
    result.rows.writeTo(weather.raw_table).using("iceberg").create()
    assert reconcile_or_raise(spark, weather, always=True) == 0
    rows = spark.sql(
        "select error_code, _sequence_number, _partition_key from raw.quarantine "
        "where feed = 'weather'"
    ).collect()
    got = sorted((r[0], r[1] or "", r[2] or "") for r in rows)
    want = sorted((code, seq or "", key or "") for _, code, seq, key in LINES.values())
    want = sorted([*want, (BAD_ENVELOPE, str(10**20 + 5), "")])  # cut in the partition key
    assert got == want
