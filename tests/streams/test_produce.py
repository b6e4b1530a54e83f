"""``floe produce`` to a landing file: framed records in the stream kind's layout."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from tests.streams.conftest import FIXTURE_PROJECT


def test_records_land_as_a_stream_file_that_decodes(tmp_path: Path):
    from floe.feeds.kinds import stream
    from floe.feeds.sources import make_feed
    from floe.registry import codec
    from floe.runtime import Settings
    from floe.streaming.produce import ProduceError, produce

    settings = Settings.from_env({"FLOE_HOME": str(tmp_path / "floe")})
    feed = make_feed("bus", "trips_landed", {}, {"kind": "stream", "registry_schema": "trips"})
    done = produce(
        feed,
        [{"trip_id": 1, "kind": "SHARED"}, {"trip_id": 2, "cash": 3.5}],
        settings=settings,
        project_dir=FIXTURE_PROJECT,
        version=1,
    )
    assert (done.count, done.version) == (2, 1)
    (landed,) = stream.discover(feed, settings.landing)
    assert str(landed.path) == done.target
    registry = stream.sync_local_registry(settings.state_dir, stream.schemas_dir(FIXTURE_PROJECT))
    lines = [json.loads(line) for line in landed.path.read_text().splitlines()]
    decoded = [codec.unframe(base64.b64decode(e["data"]), registry)[1] for e in lines]
    assert [(r["trip_id"], r["kind"], r["cash"]) for r in decoded] == [
        (1, "SHARED", None),
        (2, "KIND_UNSPECIFIED", 3.5),
    ]
    assert len({e["sequenceNumber"] for e in lines}) == 2
    with pytest.raises(ProduceError, match="no version 9"):
        produce(feed, [{}], settings=settings, project_dir=FIXTURE_PROJECT, version=9)
    with pytest.raises(ProduceError, match="record 1 does not fit trips v2"):
        produce(feed, [{"trip_id": "x"}], settings=settings, project_dir=FIXTURE_PROJECT)
