"""Stream demo files: deterministic, Kinesis envelopes, every failure class present."""

from __future__ import annotations

import base64
import json

from floe.generator import GenerateOptions, generate
from tests.helpers import ROOT, feeds_of

STREAMS = [f.name for f in feeds_of("stream")]


def _files(root):
    return sorted(p for p in root.rglob("*") if p.is_file())


def test_same_seed_same_bytes(tmp_path, monkeypatch):
    monkeypatch.setenv("FLOE_HOME", str(tmp_path / "home"))
    a = GenerateOptions(landing=tmp_path / "a", days=2, scale=100)
    b = GenerateOptions(landing=tmp_path / "b", days=2, scale=100)
    generate(a, ["streams", "reference"])
    generate(b, ["streams", "reference"])
    files_a, files_b = _files(a.landing), _files(b.landing)
    assert [p.relative_to(a.landing) for p in files_a] == [
        p.relative_to(b.landing) for p in files_b
    ]
    assert all(x.read_bytes() == y.read_bytes() for x, y in zip(files_a, files_b, strict=True))
    for stream in STREAMS:
        landed = list((a.landing / "streams" / stream).rglob("ingest_hour=*/*.jsonl"))
        assert landed, stream
    assert (a.landing / "reference" / "product_priority" / "_CHANGED").exists()


def test_envelope_shape_and_no_bad_records_when_share_is_zero(tmp_path, monkeypatch):
    from floe.registry import codec
    from floe.registry.sync import schemas_dir, sync_local_registry

    monkeypatch.setenv("FLOE_HOME", str(tmp_path / "home"))
    opts = GenerateOptions(landing=tmp_path / "l", days=2, scale=100, bad_share=0.0)
    generate(opts, ["streams"])
    registry = sync_local_registry(tmp_path / "home" / "state", schemas_dir(ROOT))
    compressed = 0
    for path in (opts.landing / "streams").rglob("*.jsonl"):
        for line in path.read_text().splitlines():
            envelope = json.loads(line)
            assert set(envelope) == {
                "sequenceNumber",
                "partitionKey",
                "approximateArrivalTimestamp",
                "data",
            }
            framed = base64.b64decode(envelope["data"], validate=True)
            compressed += framed[1] == 0x05
            codec.unframe(framed, registry)  # raises on any bad record
    assert compressed > 0
