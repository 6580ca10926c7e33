"""Combined mode's feed over a fake controller node: reads happen on the node's event thread
(``shell.call``); committed batches are published once each up to the high watermark, a
batch past it waits; when the log start passed what was published the latest snapshot comes
first; the leader the node knows goes to on_leader on each change."""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass, replace
from typing import Any

from adapters.kraft_broker.local_feed import LocalMetadataFeed
from fsm.kraft.broker.events import MetadataFetched, MetadataSnapshotLoaded
from fsm.raft.messages import Batch, OffsetAndEpoch


@dataclass(frozen=True)
class Status:
    leader_id: int = 1
    epoch: int = 1
    high_watermark: int = 0
    log_start_offset: int = 0


class Shell:
    def __init__(self) -> None:
        self.status = Status()
        self.batches: list[Batch] = []
        self.snapshot = ("s1", "s2")
        self.calls = 0
        self.core = self
        self.snapshot_id: OffsetAndEpoch | None = None
        self.port = self

    def call(self, fn: Any) -> Future[Any]:
        self.calls += 1
        f: Future[Any] = Future()
        f.set_result(fn())
        return f

    def read_committed(self, start: int, end: int) -> list[Batch]:
        assert start >= self.status.log_start_offset, "read below the log start"
        return [b for b in self.batches if b.end_offset > start and b.base_offset < end]

    def read_snapshot(self, snap: OffsetAndEpoch) -> tuple[Any, ...]:
        return self.snapshot


class Node:
    def __init__(self) -> None:
        self.shell = Shell()


def test_batches_up_to_the_high_watermark_a_snapshot_when_behind_and_the_leader() -> None:
    node, out, leaders = Node(), [], []
    feed = LocalMetadataFeed(node, out.append, lambda leader, epoch: leaders.append(leader))
    sh = node.shell
    sh.batches = [Batch(0, 1, ("a",)), Batch(1, 1, ("b", "c")), Batch(3, 1, ("d",))]
    sh.status = replace(sh.status, high_watermark=3)
    feed._poll()
    feed._poll()  # nothing new: no read at all
    assert out == [MetadataFetched(0, ("a", "b", "c"))] and sh.calls == 1
    assert leaders == [1]
    # the controller snapshotted at 10 and dropped the log below it; the broker lagged
    sh.batches = [Batch(10, 2, ("x",))]
    sh.snapshot_id = OffsetAndEpoch(10, 2)
    sh.status = replace(sh.status, high_watermark=11, log_start_offset=10, leader_id=2, epoch=2)
    feed._poll()
    assert out[1:] == [MetadataSnapshotLoaded(10, ("s1", "s2")), MetadataFetched(10, ("x",))]
    assert leaders == [1, 2] and feed.published == 11
