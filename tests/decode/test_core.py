"""The decode runs in executors' Python workers, never record by record in the driver."""

from __future__ import annotations

import itertools

import pytest

from floe.generator import GenerateOptions, generate
from floe.registry.sync import schemas_dir, sync_local_registry
from tests.helpers import ROOT, feed

pytestmark = pytest.mark.integration


def test_decode_runs_in_python_workers_and_stages_parquet(spark, lakehouse):
    from floe.decode.core import DecodeLimits, read_staged, stage_files
    from floe.feeds.kinds import stream
    from floe.registry.backends import RegistryRef

    rides = feed("unicorn_rides")
    generate(GenerateOptions(landing=lakehouse.landing, days=1, scale=64), ["unicorn_rides"])
    sync_local_registry(lakehouse.state_dir, schemas_dir(ROOT))
    files = stream.discover(rides, lakehouse.landing)
    staging = lakehouse.state_dir / "staging-test"
    pieces = stage_files(
        spark,
        files,
        stream.spec(rides),
        stream.record_type(rides, ROOT),
        RegistryRef.from_settings(lakehouse),
        DecodeLimits.from_settings(lakehouse),
        staging,
        lakehouse.decode_split_bytes,
    )
    assert {p.source_file for p in pieces} == {f.key for f in files}
    staged = read_staged(spark, staging, stream.record_type(rides, ROOT))
    assert staged.count() == sum(p.records_in for p in pieces)
    assert staged.where("record is not null").count() == sum(p.decoded for p in pieces) > 0


@pytest.mark.parametrize("seed", range(20))
def test_pieces_of_a_file_hold_every_line_once_at_its_offset(tmp_path, seed):
    """Cut anywhere (mid-line, at a newline, CRLF, blank lines, no final newline), the
    pieces of a file together yield each non-blank line exactly once, with its offset."""
    import random

    from floe.decode.core import piece_lines

    rng = random.Random(seed)
    lines = [
        rng.choice([b"", b"\r", b"x" * rng.randint(1, 40), b'{"a":1}\r'])
        for _ in range(rng.randint(1, 60))
    ]
    data = b"\n".join(lines) + rng.choice([b"", b"\n"])
    path = tmp_path / "f.jsonl"
    path.write_bytes(data)
    cuts = sorted({0, len(data), *(rng.randint(0, len(data)) for _ in range(rng.randint(0, 6)))})
    got = []
    for start, end in itertools.pairwise(cuts):
        triples, _ = piece_lines(str(path), start, end, len(data), max_line=1 << 20)
        got += [(offset, bytes(line)) for offset, line, _ in triples]
    expected, offset = [], 0
    for line in data.split(b"\n"):
        if line and line != b"\r":
            expected.append((offset, line))
        offset += len(line) + 1
    assert got == expected


ARRIVALS = [
    "2022-07-01T00:00:00.000Z",  # Kinesis's shape
    "2022-07-01T23:59:59.999Z",
    "2022-07-01T12:34:56Z",
    "2022-07-01T12:34:56.1Z",
    "2022-07-01T12:34:56.123456Z",
    "2022-07-01T12:34:56.1234567Z",  # past microseconds: Spark's parser
    "2022-07-01T12:34:56.123456789Z",
    "2022-07-01T12:34:56.Z",
    "2024-02-29T00:00:00.000Z",  # a leap day
    "2023-02-29T00:00:00.000Z",  # not one
    "2022-04-31T00:00:00.000Z",
    "2022-13-01T00:00:00.000Z",
    "2022-07-01T24:00:00.000Z",
    "2022-07-01T23:60:00.000Z",
    "2022-07-01T23:59:60.000Z",
    "0000-01-01T00:00:00.000Z",
    "9999-12-31T23:59:59.999999Z",
    "1969-12-31T23:59:59.999999Z",  # before the epoch
    "2022-07-01T00:00:00.000z",
    "2022-07-01t00:00:00.000Z",
    "2022-07-01T00:00:00.000+02:00",
    "2022-07-01T00:00:00.000",  # no zone: the session's
    "2022-07-01 00:00:00",
    " 2022-07-01T00:00:00.000Z",
    "2022-07-01T00:00:00.000Z ",
    "2022-7-1T0:0:0Z",
    "\uff12\uff10\uff12\uff12-07-01T00:00:00.000Z",  # full-width digits
    "2022-07-01T00:00:00.-12Z",
    "+2022-07-01T00:00:00.000Z",
    "2022",
    "",
    "not a time",
    None,
]


def test_arrival_times_read_as_spark_casts_them(spark):
    """floe.jvm.Arrival gives to_timestamp's answer for every text, NULL included."""
    from pyspark.sql import functions as F

    from floe.decode.core import ARRIVAL_CLASS, arrival_timestamp
    from floe.runtime.jars import jvm_class

    assert jvm_class(spark, ARRIVAL_CLASS) is not None  # the session has floe's jar
    frame = spark.createDataFrame([(i, a) for i, a in enumerate(ARRIVALS)], "i int, a string")
    rows = frame.select(  # as microseconds: year 0 is no Python datetime
        "i",
        F.unix_micros(F.to_timestamp("a")).alias("want"),
        F.unix_micros(arrival_timestamp(spark, "a")).alias("got"),
    ).collect()
    assert len(rows) == len(ARRIVALS)
    assert [(r.i, r.got) for r in rows] == [(r.i, r.want) for r in rows]
    by_text = {ARRIVALS[r.i]: r.got for r in rows}
    assert by_text["2022-07-01T00:00:00.000Z"] == 1_656_633_600_000_000
    assert by_text["2022-07-01T12:34:56.1Z"] == 1_656_678_896_100_000
    assert by_text["2023-02-29T00:00:00.000Z"] is None
