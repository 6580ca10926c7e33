"""The observer's feed, over a scripted Raft core and a log of batches: each high watermark
publishes exactly the committed batches not yet published, contiguous, control batches
included (they take offsets), split at MAX_RECORDS_PER_EVENT; an installed snapshot is
published whole and the log goes on after it; the leader followed goes to on_leader once per
change; a log that does not reach the high watermark is an error, never a silent gap."""

from __future__ import annotations

from typing import Any

import pytest

from adapters.kraft_broker import metadata_feed
from adapters.kraft_broker.metadata_feed import MetadataFeed
from fsm.kraft.broker.events import MetadataFetched, MetadataSnapshotLoaded
from fsm.raft.effects import HighWatermark, InstallSnapshot, RoleChanged
from fsm.raft.messages import Batch, LeaderChange, OffsetAndEpoch
from fsm.raft.roles import RaftRole


class Script:
    """A Raft core whose ``handle`` returns the effects it is given."""

    snapshot_id = None

    def handle(self, effects: Any) -> list[Any]:
        return list(effects)


class Port:
    def __init__(self, batches: list[Batch], snapshot: tuple[Any, ...] = ()) -> None:
        self.batches = batches
        self.snapshot = snapshot
        self.calls: list[str] = []

    def read_committed(self, start: int, end: int) -> list[Batch]:
        return [b for b in self.batches if b.end_offset > start and b.base_offset < end]

    def read_snapshot(self, snap: OffsetAndEpoch) -> tuple[Any, ...]:
        return self.snapshot

    def __getattr__(self, name: str) -> Any:  # every other port call: noted
        return lambda effect: self.calls.append(name)


def _feed(port: Port) -> tuple[MetadataFeed, list[Any], list[int]]:
    out: list[Any] = []
    leaders: list[int] = []
    return MetadataFeed(Script(), port, out.append,
                        lambda leader, epoch: leaders.append(leader)), out, leaders


def test_committed_batches_once_each_with_control_batches() -> None:
    log = [Batch(0, 1, (LeaderChange(1, (1, 2, 3)),), True), Batch(1, 1, ("a", "b")),
           Batch(3, 1, ("c",)), Batch(4, 2, (LeaderChange(2, (1, 2, 3)),), True)]
    port = Port(log)
    feed, out, _ = _feed(port)
    feed.process([HighWatermark(3)])
    feed.process([HighWatermark(3)])  # nothing new
    feed.process([HighWatermark(5)])
    assert out == [MetadataFetched(0, (LeaderChange(1, (1, 2, 3)), "a", "b")),
                   MetadataFetched(3, ("c", LeaderChange(2, (1, 2, 3))))]
    assert port.calls == ["high_watermark"] * 3  # the shell's port heard them first
    with pytest.raises(AssertionError, match="only to 5"):
        feed.process([HighWatermark(9)])


def test_a_long_catch_up_is_split(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(metadata_feed, "MAX_RECORDS_PER_EVENT", 3)
    port = Port([Batch(i * 2, 1, (i, i)) for i in range(4)])
    feed, out, _ = _feed(port)
    feed.process([HighWatermark(8)])
    assert [(e.base_offset, e.records) for e in out] == [(0, (0, 0)), (2, (1, 1)),
                                                         (4, (2, 2)), (6, (3, 3))]


def test_a_snapshot_then_the_log_after_it_and_the_leader() -> None:
    port = Port([Batch(10, 3, ("x",))], snapshot=("r1", "r2"))
    feed, out, leaders = _feed(port)
    feed.process([InstallSnapshot(OffsetAndEpoch(10, 3)), HighWatermark(11)])
    assert out == [MetadataSnapshotLoaded(10, ("r1", "r2")), MetadataFetched(10, ("x",))]
    feed.process([RoleChanged(RaftRole.UNATTACHED, RaftRole.FOLLOWER, 3, 2)])
    feed.process([RoleChanged(RaftRole.FOLLOWER, RaftRole.FOLLOWER, 3, 2)])
    feed.process([RoleChanged(RaftRole.FOLLOWER, RaftRole.UNATTACHED, 4, -1)])
    assert leaders == [2, -1]
