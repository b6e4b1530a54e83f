"""Kinesis positions from the ledger's done segment keys (a pure function, no Spark)."""

from __future__ import annotations

from floe.feeds.kinds.kinesis import KINESIS
from floe.streams.kinesis import ShardPosition

S = "kinesis://vent"


def test_an_end_marker_finishes_a_shard_once_its_rows_are_committed():
    done = [f"{S}/shardId-0/1-10", f"{S}/shardId-0/end-10", f"{S}/shardId-1/1-7"]
    got = KINESIS.positions(done)
    assert got["shardId-0"] == ShardPosition(after="10", finished=True)
    assert got["shardId-1"] == ShardPosition(after="7")


def test_an_end_marker_ahead_of_the_position_does_not_finish_the_shard():
    """A crash after the ledger commit, before the raw one: the end marker is done
    (it loads no rows) but the segment 11-20 is not; the shard is read again from 10."""
    got = KINESIS.positions([f"{S}/shardId-0/1-10", f"{S}/shardId-0/end-20"])
    assert got["shardId-0"] == ShardPosition(after="10")


def test_a_shard_lost_whole_after_a_retention_gap_is_finished():
    """``gap-21`` (resume at 21) then the shard expired: ``end-20`` covers it."""
    done = [f"{S}/shardId-0/1-10", f"{S}/shardId-0/gap-21", f"{S}/shardId-0/end-20"]
    got = KINESIS.positions(done)
    assert got["shardId-0"] == ShardPosition(at_sequence="21", finished=True)
    assert got["shardId-0"].held == 20


def test_an_end_marker_alone_finishes_only_a_shard_lost_before_any_read():
    assert KINESIS.positions([f"{S}/shardId-0/end-0"]) == {
        "shardId-0": ShardPosition(finished=True)
    }
    assert KINESIS.positions([f"{S}/shardId-0/end-5"]) == {}  # read it from its start
