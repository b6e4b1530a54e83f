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
