"""Controller election, failover, resignation, session states."""

from __future__ import annotations

import pytest

from fsm.controller import Controller, ControllerConfig
from fsm.effects import (
    BecameController,
    CreateOp,
    LoadCluster,
    Resigned,
    SetDataOp,
    StartTimer,
)
from fsm.events import (
    ControllerChange,
    SessionStateChange,
    Startup,
    TopicDeletionRequest,
    WriteFailure,
    WriteResult,
)
from fsm.requests import LeaderAndIsrRequest, UpdateMetadataRequest
from fsm.zk_session_states import ZkClientState
from fsm.znodes import ControllerEpochZnode

from .harness import active, broker_change, lai_to, no_illegal, sends, writes


def test_election_win_bumps_epoch_and_fence_version() -> None:
    ctl = Controller(ControllerConfig(broker_id=2))
    effects = ctl.handle(ControllerChange(None, 4, 7))
    (w,) = writes(effects)
    assert w.fence_version is None
    create, setdata = w.ops
    assert isinstance(create, CreateOp) and create.path == "/controller" and create.ephemeral
    assert isinstance(setdata, SetDataOp) and setdata.version == 7
    assert setdata.data == ControllerEpochZnode(5)
    assert ctl.awaiting_write == w.token
    out = ctl.handle(WriteResult(w.token))
    assert out == [BecameController(5), LoadCluster()]
    assert ctl.is_active and ctl.epoch == 5 and ctl.fence_version == 8


def test_startup_does_not_elect_before_a_read() -> None:
    """Startup carries no epoch: no election on a guess; the ControllerChange read from
    /controller and /controller_epoch that follows decides it with the real version."""
    ctl = Controller(ControllerConfig(broker_id=2))
    assert ctl.handle(Startup()) == []
    assert ctl.awaiting_write is None and not ctl.is_active
    (w,) = writes(ctl.handle(ControllerChange(None, 3, 5)))
    assert w.ops[1] == SetDataOp("/controller_epoch", ControllerEpochZnode(4), 5)


def test_election_lost_waits() -> None:
    ctl = Controller(ControllerConfig(broker_id=2))
    ctl.handle(Startup())
    (w,) = writes(ctl.handle(ControllerChange(None, 0, 0)))
    out = ctl.handle(WriteResult(w.token, failures=(WriteFailure("/controller", "NodeExists"),)))
    assert out == [] and not ctl.is_active and ctl.awaiting_write is None


def test_other_event_while_awaiting_write_is_a_programming_error() -> None:
    ctl = Controller(ControllerConfig(broker_id=2))
    ctl.handle(ControllerChange(None, 0, 0))
    with pytest.raises(AssertionError):
        ctl.handle(Startup())


def test_failover_sends_full_state_and_starts_timers() -> None:
    ctl = Controller(ControllerConfig(broker_id=1))
    from fsm.events import ClusterLoaded
    from fsm.values import ClusterSnapshot, TopicAssignment

    from .harness import brokers, feed, state
    feed(ctl, ControllerChange(None, 0, 0))
    snap = ClusterSnapshot(
        live_brokers=brokers(1, 2, 3),
        topics=(("t", TopicAssignment.of({0: (1, 2), 1: (2, 3), 2: (3, 1)})),),
        partition_states=((("t", 0), state(1, (1, 2))), (("t", 1), state(2, (2, 3))),
                          (("t", 2), state(3, (3, 1)))))
    out = feed(ctl, ClusterLoaded(snap))
    assert StartTimer in {type(e) for e in out}
    for b in (1, 2, 3):
        req = lai_to(out, b)
        assert req is not None and req.controller_epoch == 1 and req.broker_epoch == 100 + b
        assert {p.tp for p in req.partitions} == {tp for tp in [("t", 0), ("t", 1), ("t", 2)]
                                                 if b in ctl.replicas(tp)}
    um = sends(out, UpdateMetadataRequest)
    assert {s.broker_id for s in um} == {1, 2, 3}
    assert all(len(s.request.partitions) == 3 for s in um)
    no_illegal(ctl)


def test_failover_elects_offline_and_new_partitions() -> None:
    from .harness import state
    ctl = active(live=(2, 3), topics={"t": {0: (1, 2), 1: (2, 3)}},
                 states={("t", 0): state(1, (1, 2), epoch=3, version=5)})
    assert ctl.leader_and_isr(("t", 0)).leader == 2
    assert ctl.leader_and_isr(("t", 0)).leader_epoch == 4
    assert ctl.partition_zk_version(("t", 0)) == 6
    assert ctl.leader_and_isr(("t", 1)).leader == 2  # New partition created at failover
    assert ctl.partition_zk_version(("t", 1)) == 0


def test_fenced_write_resigns_and_discards() -> None:
    ctl = active()
    out = ctl.handle(TopicDeletionRequest(frozenset({"ghost"})))
    (w,) = writes(out)
    out = ctl.handle(WriteResult(w.token, fenced=True))
    assert any(isinstance(e, Resigned) for e in out)
    assert not sends(out)
    assert not ctl.is_active and ctl.topic_names() == frozenset()


def test_session_closed_resigns_connecting_pauses() -> None:
    ctl = active()
    assert ctl.handle(SessionStateChange(ZkClientState.CONNECTING)) == []
    assert ctl.paused
    assert broker_change(ctl, 1, 2) == []  # not handled while paused
    assert ctl.live_brokers() == {1: 101, 2: 102, 3: 103}
    ctl.handle(SessionStateChange(ZkClientState.CONNECTED))
    assert not ctl.paused
    out = ctl.handle(SessionStateChange(ZkClientState.CLOSED))
    assert any(isinstance(e, Resigned) for e in out) and not ctl.is_active


def test_another_controller_makes_us_resign() -> None:
    ctl = active()
    out = ctl.handle(ControllerChange(2, 2, 2))
    assert any(isinstance(e, Resigned) for e in out)
    assert not sends(out, LeaderAndIsrRequest)


def test_failover_without_partitions_tells_every_broker_the_controller() -> None:
    """Kafka sends every live broker an UpdateMetadata (live brokers, so the controller id)
    on failover, even when there is no partition to announce."""
    from fsm.events import ClusterLoaded
    from fsm.values import ClusterSnapshot

    from .harness import brokers, feed
    ctl = Controller(ControllerConfig(broker_id=1))
    feed(ctl, ControllerChange(None, 0, 0))
    out = feed(ctl, ClusterLoaded(ClusterSnapshot(live_brokers=brokers(1, 2, 3))))
    um = sends(out, UpdateMetadataRequest)
    assert sorted(s.broker_id for s in um) == [1, 2, 3]
    for s in um:
        assert s.request.partitions == () and s.request.controller_id == 1
        assert [b.broker_id for b in s.request.live_brokers] == [1, 2, 3]


def test_failover_removes_dead_followers_from_the_isr() -> None:
    """ReplicaStateMachine.startup: replicas on dead brokers go OfflineReplica and leave the
    ISR (as onBrokerFailure does); the last ISR member stays."""
    from fsm.replica_states import ReplicaState

    from .harness import state
    ctl = active(live=(2, 3), topics={"t": {0: (2, 3, 1), 1: (3, 1), 2: (1, 4)}},
                 states={("t", 0): state(2, (2, 3, 1)), ("t", 1): state(3, (3, 1)),
                         ("t", 2): state(1, (1, 4), epoch=2, version=4)})
    li = ctl.leader_and_isr(("t", 0))
    assert li.leader == 2 and li.isr == (2, 3) and li.leader_epoch == 1
    assert ctl.partition_zk_version(("t", 0)) == 1
    assert ctl.leader_and_isr(("t", 1)).isr == (3,)
    assert ctl.replica_state(("t", 0), 1) is ReplicaState.OfflineReplica
    # no live replica: leader -1, the ISR kept (never emptied)
    li = ctl.leader_and_isr(("t", 2))
    assert li.leader == -1 and li.isr == (1, 4)
    no_illegal(ctl)
