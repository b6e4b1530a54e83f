"""`floe generate --jobs`: feeds written side by side land the same bytes as one process,
and the demo makers stay linear in the scale (no per-record scan of the table so far)."""

from __future__ import annotations

import random
from datetime import datetime

import pytest

from floe.generator import GenerateOptions, LandingConflictError, default_jobs, generate
from floe.generator.base import PARALLEL_SCALE
from floe.generator.demo import sports, streams


def _landed(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_jobs_land_the_same_bytes_as_one_process(tmp_path):
    serial = GenerateOptions(landing=tmp_path / "one", days=4, scale=400, seed=11)
    side_by_side = GenerateOptions(landing=tmp_path / "two", days=4, scale=400, seed=11, jobs=2)
    one = generate(serial)
    two = generate(side_by_side)
    assert len(two.written) == len(one.written) > 40
    assert _landed(serial.landing) == _landed(side_by_side.landing)
    # Re-running side by side changes nothing.
    again = generate(side_by_side)
    assert again.written == []
    # every landed file was compared (the reference change flag is not a landed extract)
    assert set(again.unchanged) == {p for p in two.written if p.name != "_CHANGED"}


def test_a_conflict_in_a_worker_is_the_callers_error(tmp_path):
    opts = GenerateOptions(landing=tmp_path / "landing", days=2, scale=100, jobs=2)
    generate(opts, ["customers", "streams"])
    landed = sorted((opts.landing / "streams").rglob("*.jsonl"))[0]
    landed.write_bytes(b"someone else's bytes\n")
    with pytest.raises(LandingConflictError, match="already landed with different content"):
        generate(opts, ["customers", "streams"])
    assert landed.read_bytes() == b"someone else's bytes\n"  # never modified


def test_default_jobs_follow_the_scale():
    assert default_jobs(1000) == 1
    assert default_jobs(PARALLEL_SCALE) >= 1


def test_movie_ids_stay_the_sorted_live_ids():
    make = streams._Movies()
    rng = random.Random(3)
    ops = set()
    for i in range(3000):
        ops.add(make(rng, i, datetime(2022, 7, 1), 1)["__op"])
        assert make.ids == sorted(make.live)
    assert ops == {"c", "u", "d"}


def test_taken_keys_track_the_largest_first_part():
    taken = sports._Taken()
    assert sports.sporting_event.next_key(taken, random.Random(0)) == (1,)
    for key in [(5,), (2,), (9,), (7,)]:
        taken.add(key)
    assert taken.top == 9
    assert sports.sporting_event.next_key(taken, random.Random(0)) == (10,)
