"""``ControllerOnRaft``: three quorum controllers, each on its node's real Raft core, in the Raft
core's test cluster (``tests/unit/raft/harness.py``: in-memory logs, a bag of messages, the
ghost checks of election safety and committed entries on every step). The glue is what the
live node and the checker's KRaft world both run; here each of its rules is held by a test."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from fsm.errors import ErrorCode
from fsm.kraft.controller import requests as rq
from fsm.kraft.controller.config import QuorumControllerConfig
from fsm.kraft.controller.events import ControllerRequest, MembershipChange, Reply
from fsm.kraft.controller.quorum_controller import QuorumController
from fsm.kraft.image import MetadataImage, image_from_records, snapshot_records
from fsm.kraft.on_raft import ControllerOnRaft
from fsm.kraft.records.uuid import uuid_of
from fsm.kraft.records.values import BrokerEndpoint, RegisterBrokerRecord
from fsm.raft.core import RaftNode
from fsm.raft.effects import ELECTION, FETCH
from fsm.raft.events import Resign
from fsm.raft.messages import Batch, OffsetAndEpoch
from fsm.raft.roles import RaftRole

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "raft"))
from harness import Cluster, Port  # noqa: E402

CLUSTER_ID = "on-raft-test"


class GluePort(Port):
    """The harness's Raft port, plus what the glue asks of a controller node's shell."""

    def reply(self, e: Reply) -> None:
        self.c.replies.append((self.id, e.token, e.response))

    def membership_changed(self, e: MembershipChange) -> None:
        self.c.moves.append((self.id, e.broker_id, e.source, e.target))

    def read_committed(self, from_offset: int, to_offset: int) -> list[Batch]:
        return [b for b in self.disk.batches
                if b.end_offset > from_offset and b.base_offset < to_offset]

    def read_snapshot(self, snapshot_id: OffsetAndEpoch) -> tuple[Any, ...]:
        return self.c.metadata_snapshots[snapshot_id]

    def read_snapshot_image(self, snapshot_id: OffsetAndEpoch) -> MetadataImage | None:
        if not self.c.build_images:
            return None
        image = image_from_records(self.c.metadata_snapshots[snapshot_id])
        self.c.images_built.append(image)
        return image

    def write_snapshot(self, snapshot_id: OffsetAndEpoch, records: Any) -> None:
        d = self.disk
        entries = tuple(d.entry(o) for o in range(snapshot_id.offset))
        self.c.snapshots.setdefault(snapshot_id, entries)
        self.c.metadata_snapshots[snapshot_id] = tuple(records)
        d.snapshot, d.snapshot_entries = snapshot_id, entries


class ControllerCluster(Cluster):
    def __init__(self, snapshot_every: int = 0, build_images: bool = False) -> None:
        super().__init__()
        self.snapshot_every = snapshot_every
        self.build_images = build_images
        """Whether the port builds a snapshot's image as a node's does (else: its records)."""
        self.images_built: list[MetadataImage] = []
        self.glue: dict[int, ControllerOnRaft] = {}
        self.replies: list[tuple[int, Any, Any]] = []
        self.moves: list[tuple[int, int, str, str]] = []
        self.metadata_snapshots: dict[OffsetAndEpoch, tuple[Any, ...]] = {}

    def start(self, node_id: int) -> None:
        d = self.disks[node_id]
        node = RaftNode(self.config(node_id), d.quorum, d.summary())
        self.nodes[node_id] = node
        controller = QuorumController(QuorumControllerConfig(
            node_id=node_id, cluster_id=CLUSTER_ID, session_timeout_ms=10_000,
            default_replication_factor=1))
        glue = ControllerOnRaft(node, controller, GluePort(self, node_id), self.snapshot_every)
        self.glue[node_id] = glue
        self.drivers[node_id] = glue  # type: ignore[assignment] -- same ``process``
        self.applied[node_id] = d.log_start
        from fsm.raft.events import Start

        self.event(node_id, Start())

    def controller(self, node_id: int) -> QuorumController:
        return self.glue[node_id].controller

    def elect(self, node_id: int) -> None:
        """Stand ``node_id`` for election: its election timer fires (a follower's fetch
        timer: it no longer hears its leader)."""
        timer = (node_id, ELECTION, -1)
        self.fire(timer if timer in self.timers else (node_id, FETCH, -1))
        self.run_until_quiet()

    def register(self, node_id: int, broker: int, token: Any = None) -> None:
        request = rq.BrokerRegistrationRequest(
            broker, CLUSTER_ID, uuid_of(broker), (BrokerEndpoint("PLAINTEXT", "h", 9092),))
        self.event(node_id, ControllerRequest(token or ("register", broker), request))


def _answers(c: ControllerCluster, token: Any) -> list[Any]:
    return [resp for _, t, resp in c.replies if t == token]


def test_the_raft_leader_becomes_the_active_controller_once_its_epoch_start_commits() -> None:
    c = ControllerCluster()
    c.start_all()
    c.fire((1, ELECTION, -1))
    # votes granted, the LeaderChange appended, but not yet on a majority: a standby still
    for _ in range(4):
        c.deliver(0)
    assert c.nodes[1].role is RaftRole.LEADER  # type: ignore[union-attr]
    assert not c.controller(1).active
    c.run_until_quiet()
    assert c.controller(1).active and c.controller(1).epoch == c.nodes[1].epoch  # type: ignore[union-attr]
    assert not c.controller(2).active and not c.controller(3).active
    # the controller's next record takes the log's end offset, after the control record
    assert c.controller(1).next_offset == c.nodes[1].end_offset  # type: ignore[union-attr]


def test_an_answer_waits_for_the_commit_and_standbys_replay_the_record() -> None:
    c = ControllerCluster()
    c.start_all()
    c.elect(1)
    end = c.nodes[1].end_offset  # type: ignore[union-attr]
    c.register(1, broker=7)
    assert _answers(c, ("register", 7)) == []  # appended, not committed
    c.run_until_quiet()
    [resp] = _answers(c, ("register", 7))
    assert resp.error is ErrorCode.NONE and resp.broker_epoch == end
    for n in (1, 2, 3):
        reg = c.controller(n).committed.brokers[7]
        assert reg.epoch == end, n
    # every voter's log holds the record at the offset the broker epoch names
    for n in (1, 2, 3):
        batch = next(b for b in c.disks[n].batches if b.base_offset == end)
        assert isinstance(batch.records[0], RegisterBrokerRecord) and not batch.control


def test_lost_leadership_reverts_the_uncommitted_state_and_fails_the_waiting_answer() -> None:
    c = ControllerCluster()
    c.start_all()
    c.elect(1)
    c.register(1, broker=7)
    old = c.controller(1)
    assert 7 in old.image.brokers and 7 not in old.committed.brokers
    c.bag.clear()  # the record never leaves node 1
    c.event(1, Resign())
    c.bag.clear()  # nor does its resignation: node 2 just times out
    c.elect(2)
    assert c.controller(2).active and not old.active
    assert 7 not in old.image.brokers  # the future state is gone with the leadership
    [resp] = _answers(c, ("register", 7))
    assert resp.error is ErrorCode.NOT_CONTROLLER
    # node 1's uncommitted record was truncated by the new leader's log
    assert all(7 not in c.controller(n).committed.brokers for n in (1, 2, 3))
    assert not any(isinstance(r, RegisterBrokerRecord)
                   for b in c.disks[1].batches for r in b.records)


def test_a_new_active_controller_takes_over_with_its_image_already_built() -> None:
    c = ControllerCluster()
    c.start_all()
    c.elect(1)
    for b in (7, 8):
        c.register(1, broker=b)
    c.run_until_quiet()
    c.event(1, Resign())
    c.run_until_quiet()
    c.elect(3)
    new = c.controller(3)
    assert new.active and set(new.committed.brokers) == {7, 8}
    assert snapshot_records(new.committed) == snapshot_records(c.controller(1).committed)
    c.register(3, broker=9)
    c.run_until_quiet()
    assert all(9 in c.controller(n).committed.brokers for n in (1, 2, 3))


@pytest.mark.parametrize("build_images", [False, True])
def test_snapshots_are_written_every_n_records_and_a_lagging_voter_loads_one(
        build_images: bool) -> None:
    c = ControllerCluster(snapshot_every=2, build_images=build_images)
    c.start_all()
    c.elect(1)
    c.crash(3)
    for b in (7, 8, 9):
        c.register(1, broker=b)
        c.run_until_quiet()
    assert c.metadata_snapshots, "no snapshot written"
    assert c.disks[1].log_start > 0 and c.nodes[1].log_start_offset > 0  # type: ignore[union-attr]
    c.start(3)  # behind the leader's log start: it must fetch the snapshot
    c.run_until_quiet(timers=False)
    for t in sorted(c.timers):
        if t[0] == 3 and t[1] != ELECTION:
            c.fire(t)
            c.run_until_quiet()
    assert c.disks[3].snapshot is not None
    assert set(c.controller(3).committed.brokers) == {7, 8, 9}
    assert snapshot_records(c.controller(3).committed) == \
        snapshot_records(c.controller(1).committed)
    # the port's image, when it builds one, is the one the controller took (no replay)
    assert any(i is c.controller(3).committed for i in c.images_built) == build_images


@pytest.mark.parametrize("build_images", [False, True])
def test_a_restarted_voter_starts_its_controller_from_its_latest_snapshot(
        build_images: bool) -> None:
    c = ControllerCluster(snapshot_every=1, build_images=build_images)
    c.start_all()
    c.elect(1)
    for b in (7, 8):
        c.register(1, broker=b)
        c.run_until_quiet()
    assert c.disks[2].snapshot is not None
    c.crash(2)
    c.start(2)
    assert set(c.controller(2).committed.brokers) == {7, 8}
    assert (c.images_built[-1:] == [c.controller(2).committed]) == build_images
    if build_images:
        assert c.images_built[-1] is c.controller(2).committed


def test_a_long_append_goes_to_the_log_as_several_bounded_batches(monkeypatch: Any) -> None:
    import fsm.kraft.on_raft as glue_module

    monkeypatch.setattr(glue_module, "MAX_RECORDS_PER_BATCH", 2)
    c = ControllerCluster()
    c.start_all()
    c.elect(1)
    c.register(1, broker=7)
    c.run_until_quiet()
    epoch = c.controller(1).committed.brokers[7].epoch
    c.event(1, ControllerRequest("hb", rq.BrokerHeartbeatRequest(7, epoch, 10**6, False)))
    c.run_until_quiet()
    start = c.nodes[1].end_offset  # type: ignore[union-attr]
    request = rq.CreateTopicsRequest((rq.CreatableTopic("t", 5, 1),), (uuid_of(99),))
    c.event(1, ControllerRequest("create", request))
    c.run_until_quiet()
    [resp] = _answers(c, "create")
    assert resp.topics[0].error is ErrorCode.NONE
    batches = [b for b in c.disks[1].batches if b.base_offset >= start]
    assert [len(b.records) for b in batches] == [2, 2, 2]  # the topic and 5 partitions
    for n in (1, 2, 3):  # every standby replayed them all, in order
        assert len(c.controller(n).committed.topic("t").partitions) == 5, n


def test_a_new_active_controller_answers_a_request_that_writes_nothing_at_once() -> None:
    """After a failover the new leader's log ends with its LeaderChange control record, which
    the controller never replays. An answer that appends nothing waits for everything
    appended so far; taking that to include the control record left a quiet cluster's
    heartbeats unanswered until some other request wrote a record (found live, issue 26)."""
    c = ControllerCluster()
    c.start_all()
    c.elect(1)
    c.register(1, broker=7)
    c.run_until_quiet()
    [reg] = _answers(c, ("register", 7))
    c.event(1, Resign())
    c.run_until_quiet()
    c.elect(3)
    assert c.controller(3).active
    beat = rq.BrokerHeartbeatRequest(7, reg.broker_epoch, c.nodes[3].end_offset,  # type: ignore[union-attr]
                                     want_fence=True)
    c.event(3, ControllerRequest(("beat", 7), beat))
    c.run_until_quiet()
    [resp] = _answers(c, ("beat", 7))
    assert resp.error is ErrorCode.NONE and resp.is_fenced
