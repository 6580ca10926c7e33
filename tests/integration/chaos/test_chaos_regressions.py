"""Regression tests for the bugs the fault campaign found (docs/reliability.md, "What failed
along the way"), each pinned where it lived, without the campaign's processes."""

from __future__ import annotations

import pytest
from kazoo.client import KazooClient

from adapters.zookeeper import codec
from adapters.zookeeper.reads import KazooReadPort
from fsm import zk_paths as P
from fsm.controller import Controller, ControllerConfig
from fsm.effects import SendRequest, ZkWrite
from fsm.events import ClusterLoaded, ControllerChange, WriteResult
from fsm.reads import cluster_snapshot
from fsm.replica_states import ReplicaState
from fsm.values import BrokerInfo, ClusterSnapshot, LeaderAndIsr, PartitionStateZk, TopicAssignment
from fsm.znodes import IsrChangeZnode

T0 = ("t", 0)


def brokers(*ids: int) -> tuple[BrokerInfo, ...]:
    return tuple(BrokerInfo(b, 100 + b) for b in ids)


def state(leader: int, isr: tuple[int, ...], epoch: int, version: int) -> PartitionStateZk:
    return PartitionStateZk(LeaderAndIsr(leader, epoch, isr, 1), version)


def feed(ctl: Controller, event: object) -> list:
    """Handle ``event`` and answer every write with success until the controller stops."""
    out = list(ctl.handle(event))  # type: ignore[arg-type]
    for _ in range(10):
        last = out[-1] if out else None
        if not isinstance(last, ZkWrite) or ctl.awaiting_write is None:
            return out
        out.extend(ctl.handle(WriteResult(last.token)))
    raise AssertionError("the controller kept writing")


def _leader_and_isr(effects: list, broker: int) -> list[tuple[int, int, tuple[int, ...]]]:
    return [(p.leader, p.leader_epoch, p.replicas) for e in effects
            if isinstance(e, SendRequest) and e.broker_id == broker
            and type(e.request).__name__ == "LeaderAndIsrRequest"
            for p in e.request.partitions if (p.topic, p.partition) == T0]


def test_failover_restarts_an_expanded_reassignment_at_its_epoch_bump() -> None:
    """The previous controller wrote RS = [1, 3, 2] (target [1, 3]) and died before the
    leader-epoch bump. The leader (2) must hear of replica 3 under a new leader epoch: it
    ignores a LeaderAndIsr with the epoch and version it already has."""
    ctl = Controller(ControllerConfig(broker_id=2))
    feed(ctl, ControllerChange(None, 41, 41))
    snap = ClusterSnapshot(
        live_brokers=brokers(1, 2, 3),
        topics=(("t", TopicAssignment(((0, (1, 3, 2)),), ((0, (3,)),), ((0, (2,)),))),),
        partition_states=((T0, state(2, (2, 1), epoch=8, version=16)),),
        reassignments=((T0, (1, 3)),))
    out = feed(ctl, ClusterLoaded(snap))
    assert any(isinstance(e, ZkWrite) for e in out)
    assert ctl.leader_and_isr(T0).leader_epoch == 9
    assert (2, 9, (1, 3, 2)) in _leader_and_isr(out, 2)
    assert (2, 9, (1, 3, 2)) in _leader_and_isr(out, 3)
    assert ctl.replica_state(T0, 3) is ReplicaState.NewReplica
    assert ctl.reassignments() == {T0: (1, 3)}


def test_failover_leaves_a_reassignment_whose_target_is_in_sync_alone() -> None:
    ctl = Controller(ControllerConfig(broker_id=2))
    feed(ctl, ControllerChange(None, 3, 3))
    snap = ClusterSnapshot(
        live_brokers=brokers(1, 2, 3),
        topics=(("t", TopicAssignment(((0, (1, 3, 2)),))),),
        partition_states=((T0, state(2, (2, 1, 3), epoch=8, version=16)),),
        reassignments=((T0, (1, 3)),))
    feed(ctl, ClusterLoaded(snap))
    # completed instead: leader moved into the target, replicas = target
    assert ctl.replicas(T0) == (1, 3)
    assert ctl.leader_and_isr(T0).leader in (1, 3)


@pytest.mark.integration
def test_failover_snapshot_lists_isr_notifications_before_reading_states(
        zk_client: KazooClient) -> None:
    """A leader's ISR change (state, then notification) landing while a new controller
    loads: the snapshot either holds the new state or does not list the notification --
    never a listed notification (deleted as covered) over a stale state."""
    zk_client.ensure_path(P.ISR_CHANGE_NOTIFICATION)
    zk_client.ensure_path(P.BROKER_IDS)
    path = P.topic("t")
    zk_client.create(path, codec.encode(path, TopicAssignment.of({0: [1, 2]})),
                     makepath=True)
    spath = P.partition_state("t", 0)
    zk_client.create(spath, codec.encode(spath, LeaderAndIsr(1, 0, (1,), 1)), makepath=True)
    port = KazooReadPort(zk_client, timeout=10.0)
    real = port.get_states
    wrote = []

    def leader_writes_meanwhile(topics):  # type: ignore[no-untyped-def]
        got = list(real(topics))  # the read done before the writes below
        if [(t, list(ps)) for t, ps in topics] == [("t", [0])]:  # the controller's read of
            # the states (the reader's bulk read, ReadPort.get_states)...
            # ... then the leader expands its ISR and announces it
            zk_client.set(spath, codec.encode(spath, LeaderAndIsr(1, 0, (1, 2), 1)))
            npath = P.ISR_CHANGE_NOTIFICATION + "/" + P.ISR_CHANGE_PREFIX
            zk_client.create(npath, codec.encode(npath + "0000000000",
                                                  IsrChangeZnode((("t", 0),))), sequence=True)
            wrote.append(spath)
        return got

    port.get_states = leader_writes_meanwhile  # type: ignore[method-assign]
    snap = cluster_snapshot(port).value
    assert wrote, "the leader's write came after the read of the states"
    isr = dict(snap.partition_states)[T0].leader_and_isr.isr
    assert isr == (1,)
    assert snap.isr_change_notifications == (), \
        "a notification newer than the state read must be left for its watch"
