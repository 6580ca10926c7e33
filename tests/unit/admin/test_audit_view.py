"""The audit's snapshot -> GlobalView mapping and its extension point (pure: a hand-built
``ZkState``)."""

from __future__ import annotations

from adapters.zookeeper.audit import ZkState, audit_state, view_from_state
from fsm.values import LeaderAndIsr, PartitionStateZk, TopicAssignment
from invariants.view import LEADER, BrokerView, ReplicaView


def state() -> ZkState:
    return ZkState(
        controller_epoch=2,
        controller_epoch_version=2,
        broker_ids=(1, 2),
        topic_names=("t",),
        topics={"t": TopicAssignment.of({0: [1, 2]})},
        partition_states={("t", 0): PartitionStateZk(LeaderAndIsr(1, 0, (1, 2), 2), 3)},
        partition_czxids={("t", 0): 77},
    )


def test_view_holds_zookeeper_only() -> None:
    view = view_from_state(state())
    assert view.brokers is None and view.controllers is None and view.pending is None
    assert view.zk.states[("t", 0)].czxid == 77 and view.zk.states[("t", 0)].version == 3
    assert audit_state(state()) == []


def test_view_sources_fill_in_brokers() -> None:
    # a broker that leads t-0 with an ISR view that leaves itself out: the catalogue's
    # broker half of leader_in_isr applies once a source supplies brokers
    broker = BrokerView(
        1, True, "RUNNING", 5, 2, replicas=((("t", 0), ReplicaView(LEADER, 1, 0, (2,), 3)),)
    )
    rows = audit_state(state(), sources=[lambda s: {"brokers": (broker,)}])
    assert [(r.invariant, r.entity) for r in rows] == [("leader_in_isr", "t-0")]
