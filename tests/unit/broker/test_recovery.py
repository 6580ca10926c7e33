"""Startup recovery from ZooKeeper state (seed 001 section E)."""

from __future__ import annotations

from fsm.broker import BrokerCore, ReplicaRole
from fsm.broker_states import BrokerState
from fsm.effects import LoadBrokerMetadata, Register
from fsm.events import (
    BrokerMetadataLoaded,
    BrokerRegistered,
    BrokerSessionExpired,
    BrokerStarted,
    BrokerWriteResult,
    IsrChangeWanted,
)
from fsm.values import LeaderAndIsr, PartitionStateZk, TopicAssignment

from .builders import EPOCH, config, lai, lai_request, loaded, running, send


def test_startup_recovery_leads_follows_and_starts_as_zookeeper_says() -> None:
    core = BrokerCore(config(1))
    assert core.handle(BrokerStarted()) == [LoadBrokerMetadata()]
    assert core.state is BrokerState.STARTING
    meta = loaded(
        {"t": {0: (1, 2), 1: (2, 1), 2: (2, 3)}, "u": {0: (3, 1)}},
        {("t", 0): (1, 3, (1, 2), 4), ("t", 1): (2, 6, (2, 1), 9), ("t", 2): (2, 1, (2,), 1)},
    )
    assert core.handle(meta) == [Register()]
    assert core.state is BrokerState.RECOVERY
    t0, t1, u0 = core.replica(("t", 0)), core.replica(("t", 1)), core.replica(("u", 0))
    assert t0 is not None and t0.role is ReplicaRole.LEADER and t0.isr == (1, 2)
    assert (t0.leader_epoch, t0.zk_version, t0.controller_epoch) == (3, 4, 1)
    assert t1 is not None and t1.role is ReplicaRole.FOLLOWER and t1.leader == 2
    assert t1.leader_epoch == 6 and t1.zk_version == 9
    # assigned, no state yet: started, following nobody, any LeaderAndIsr is newer
    assert u0 is not None and u0.role is ReplicaRole.FOLLOWER and u0.leader == -1
    assert u0.leader_epoch == -1
    assert core.replica(("t", 2)) is None  # not assigned here
    core.handle(BrokerRegistered(EPOCH))
    assert core.state is BrokerState.RUNNING and core.epoch == EPOCH
    send(core, lai_request(lai(("u", 0), leader=3, leader_epoch=0, zk_version=0, isr=(3, 1),
                               replicas=(3, 1))))
    assert core.replica(("u", 0)).leader == 3  # type: ignore[union-attr]


def test_recovery_after_expiry_forgets_unassigned_and_adopts_newer_state() -> None:
    core = running(meta=loaded({"t": {0: (1, 2), 1: (1, 2)}},
                               {("t", 0): (1, 1, (1, 2), 1), ("t", 1): (1, 1, (1, 2), 1)}))
    assert core.believes_leader(("t", 1))
    assert core.handle(BrokerSessionExpired()) == [LoadBrokerMetadata()]
    assert core.state is BrokerState.RECOVERY and core.epoch is None
    # while away: t-0 deleted; t-1 got a new leader
    core.handle(loaded({"t": {1: (1, 2)}}, {("t", 1): (2, 2, (2,), 2)}))
    assert core.replica(("t", 0)) is None
    view = core.replica(("t", 1))
    assert view is not None and view.role is ReplicaRole.FOLLOWER and view.leader == 2
    core.handle(BrokerRegistered(EPOCH + 50))
    assert core.epoch == EPOCH + 50


def test_recovery_keeps_a_fresher_local_view() -> None:
    core = running(meta=loaded({"t": {0: (1, 2)}}, {("t", 0): (1, 1, (1, 2), 1)}))
    write = core.handle(IsrChangeWanted(("t", 0), (1,)))[0]
    core.handle(BrokerSessionExpired())
    core.handle(BrokerWriteResult(write.token))  # type: ignore[union-attr]
    # the read was taken before the ISR write committed
    core.handle(loaded({"t": {0: (1, 2)}}, {("t", 0): (1, 1, (1, 2), 1)}))
    view = core.replica(("t", 0))
    assert view is not None and view.isr == (1,) and view.zk_version == 2


def test_recovery_keeps_the_controllers_replicas_of_an_equally_fresh_view() -> None:
    """A finished reassignment: the LeaderAndIsr carries the target replicas (3, 1) before
    the controller writes them to ZooKeeper, so a read in between still lists (3, 1, 2) for
    the same partition state. The leader keeps (3, 1) and cannot add broker 2 to its ISR
    (``kcontrol check deep --random --steps 100000 --seed 350``)."""
    core = running(meta=loaded({"t": {0: (3, 1, 2)}}, {("t", 0): (1, 0, (1, 2, 3), 0)}))
    send(core, lai_request(lai(("t", 0), 1, 1, (1, 3), 1, (3, 1))))
    core.handle(BrokerSessionExpired())
    core.handle(loaded({"t": {0: (3, 1, 2)}}, {("t", 0): (1, 1, (1, 3), 1)}))
    view = core.replica(("t", 0))
    assert view is not None and view.replicas == (3, 1) and view.isr == (1, 3)
    assert core.handle(IsrChangeWanted(("t", 0), (1, 2, 3))) == []


def test_malformed_metadata_entries_are_skipped() -> None:
    core = BrokerCore(config(1))
    core.handle(BrokerStarted())
    good = ("g", TopicAssignment(((0, (1, 2)),)))
    meta = BrokerMetadataLoaded(
        (("d", TopicAssignment(((0, (1, 1)),))),  # replica named twice
         ("d2", TopicAssignment(((-1, (1,)),))),  # negative partition
         good, good,  # topic named twice: the second is skipped
         ("x", "not an assignment")),  # type: ignore[arg-type]
        ((("g", 0), PartitionStateZk(LeaderAndIsr(7, 1, (7,), 1), 3)),  # leader not a replica
         ("junk", 1)),  # type: ignore[arg-type]
    )
    assert core.handle(meta) == [Register()]
    assert [tp for tp, _ in core.replicas()] == [("g", 0)]
    view = core.replica(("g", 0))
    assert view is not None and view.leader == -1 and view.leader_epoch == -1
