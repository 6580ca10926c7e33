"""Snapshots: a node records the snapshot its state machine wrote (the log below goes); the
leader serves FetchSnapshot; a follower behind the leader's log start fetches one chunk at a
time, installs it, and fetches on from its end."""

from __future__ import annotations

import pytest

from fsm.errors import ErrorCode
from fsm.raft.effects import REQUEST, DeleteBefore, InstallSnapshot, SendSnapshotChunk
from fsm.raft.events import Flushed, Received, SnapshotWritten, TimerFired
from fsm.raft.messages import (
    FetchRequest,
    FetchSnapshotRequest,
    FetchSnapshotResponse,
    OffsetAndEpoch,
)
from tests.unit.raft.helpers import answer, batch, fetch, follower, leader, log_of, of, sent


def leader_with_snapshot() -> tuple:
    node = leader(1, log=log_of((1, 4)), epoch=1)  # LeaderChange of epoch 2 at 4
    fetch(node, 2, 5, 2)
    assert node.high_watermark == 5
    snap = OffsetAndEpoch(5, 2)
    assert node.handle(SnapshotWritten(snap)) == [DeleteBefore(5)]
    return node, snap


def test_a_snapshot_written_moves_the_log_start_and_deletes_below_it():
    node, snap = leader_with_snapshot()
    assert (node.log_start_offset, node.snapshot_id) == (5, snap)
    assert node.epochs == ((2, 5),)
    assert node.handle(SnapshotWritten(OffsetAndEpoch(4, 1))) == []  # older: nothing


def test_a_snapshot_past_the_high_watermark_or_of_the_wrong_epoch_is_refused():
    node = leader(1, log=log_of((1, 4)), epoch=1)
    with pytest.raises(ValueError, match="past the high watermark"):
        node.handle(SnapshotWritten(OffsetAndEpoch(5, 2)))
    fetch(node, 2, 5, 2)
    with pytest.raises(ValueError, match="names epoch 1"):
        node.handle(SnapshotWritten(OffsetAndEpoch(5, 1)))


def test_the_leader_serves_its_latest_snapshot_and_only_it():
    node, snap = leader_with_snapshot()
    effects = node.handle(Received(3, FetchSnapshotRequest(3, 2, snap, 6)))
    assert effects == [SendSnapshotChunk(3, FetchSnapshotResponse(ErrorCode.NONE, 2, 1, snap,
                                                                  position=6))]
    other = node.handle(Received(3, FetchSnapshotRequest(3, 2, OffsetAndEpoch(3, 1), 0)))
    assert sent(other)[0].error is ErrorCode.SNAPSHOT_NOT_FOUND
    bad = node.handle(Received(3, FetchSnapshotRequest(3, 2, snap, -1)))
    assert sent(bad)[0].error is ErrorCode.POSITION_OUT_OF_RANGE
    stale = node.handle(Received(3, FetchSnapshotRequest(3, 1, snap, 0)))
    assert sent(stale)[0].error is ErrorCode.FENCED_LEADER_EPOCH


def test_a_follower_fetches_the_snapshot_chunk_by_chunk_installs_it_and_fetches_on():
    node, effects = follower(3, 1, 2)
    (req,) = sent(effects, FetchRequest)
    snap = OffsetAndEpoch(5, 2)
    effects = answer(node, req, snapshot_id=snap, log_start_offset=5)
    assert sent(effects) == [FetchSnapshotRequest(3, 2, snap, 0)]

    def chunk(position: int, data: bytes, error: ErrorCode = ErrorCode.NONE) -> list:
        return node.handle(Received(1, FetchSnapshotResponse(error, 2, 1, snap, size=7,
                                                             position=position, chunk=data)))

    assert sent(chunk(0, b"abcd")) == [FetchSnapshotRequest(3, 2, snap, 4)]
    assert chunk(0, b"abcd") == []  # a duplicate of the answer at 0: not ours any more
    effects = chunk(4, b"efg")
    assert of(effects, InstallSnapshot) == [InstallSnapshot(snap)]
    assert (node.log_start_offset, node.end_offset, node.snapshot_id) == (5, 5, snap)
    assert node.epochs == ((2, 5),) and node.high_watermark == 5
    assert sent(effects, FetchRequest) == [FetchRequest(3, 2, 5, 2)]


def test_a_snapshot_gone_from_the_leader_sends_the_follower_back_to_fetch():
    node, effects = follower(3, 1, 2)
    (req,) = sent(effects, FetchRequest)
    snap = OffsetAndEpoch(5, 2)
    answer(node, req, snapshot_id=snap, log_start_offset=5)
    effects = node.handle(Received(1, FetchSnapshotResponse(ErrorCode.SNAPSHOT_NOT_FOUND, 2, 1,
                                                            snap)))
    assert node.pending_snapshot is None and not sent(effects)
    assert sent(node.handle(TimerFired(REQUEST, 1)), FetchRequest) == [req]


def test_a_follower_snapshotting_ahead_of_its_flush_fetches_on() -> None:
    # Found by the KRaft fault campaign: the snapshot moved the flushed offset to the log's
    # end, the Flushed that followed told nothing new, and no Fetch went out: the follower
    # stood for election one fetch timeout later.
    node, effects = follower(3, 1, 2)
    (req,) = sent(effects, FetchRequest)
    effects = answer(node, req, hw=3, batches=(batch(0, 2, 3),))
    assert sent(effects, FetchRequest) == []  # the log is not durable yet: no Fetch
    assert (node.end_offset, node.high_watermark, node.flushed_offset) == (3, 3, 0)
    effects = node.handle(SnapshotWritten(OffsetAndEpoch(3, 2)))
    assert of(effects, DeleteBefore) == [DeleteBefore(3)]
    assert sent(effects, FetchRequest) == [FetchRequest(3, 2, 3, 2)]
    assert sent(node.handle(Flushed(3)), FetchRequest) == []  # one Fetch in flight, not two
