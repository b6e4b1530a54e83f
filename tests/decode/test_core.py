"""The decode runs in executors (mapInArrow), never record by record in the driver."""

from __future__ import annotations

import pytest

from floe.generator import GenerateOptions, generate
from tests.helpers import ROOT, feed

pytestmark = pytest.mark.integration


def test_decode_runs_in_executors(spark, lakehouse):
    from floe.decode.core import decode_lines
    from floe.feeds.kinds import stream

    rides = feed("unicorn_rides")
    generate(GenerateOptions(landing=lakehouse.landing, days=1, scale=64), ["unicorn_rides"])
    stream.sync_local_registry(lakehouse.state_dir, stream.schemas_dir(ROOT))
    files = stream.discover(rides, lakehouse.landing)
    decoded = decode_lines(
        stream.read_lines(spark, files),
        stream.spec(rides),
        stream.registry_path(lakehouse.state_dir),
        stream.record_type(rides, ROOT),
    )
    plan = decoded._jdf.queryExecution().executedPlan().toString()
    assert "PythonMapInArrow" in plan or "MapInArrow" in plan
    assert decoded.where("record is not null").count() > 0
