"""The decode runs in executors' Python workers, never record by record in the driver."""

from __future__ import annotations

import pytest

from floe.generator import GenerateOptions, generate
from tests.helpers import ROOT, feed

pytestmark = pytest.mark.integration


def test_decode_runs_in_python_workers_and_stages_parquet(spark, lakehouse):
    from floe.decode.core import DecodeLimits, read_staged, stage_files
    from floe.feeds.kinds import stream
    from floe.registry.backends import RegistryRef

    rides = feed("unicorn_rides")
    generate(GenerateOptions(landing=lakehouse.landing, days=1, scale=64), ["unicorn_rides"])
    stream.sync_local_registry(lakehouse.state_dir, stream.schemas_dir(ROOT))
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
