"""A large loaded controller for the controller benchmarks (6 brokers, RF 3)."""

from __future__ import annotations

from fsm.controller import Controller, ControllerConfig
from fsm.effects import ZkWrite
from fsm.events import ClusterLoaded, ControllerChange, WriteResult
from fsm.values import (
    BrokerInfo,
    ClusterSnapshot,
    LeaderAndIsr,
    PartitionStateZk,
    TopicAssignment,
)

BROKERS = (1, 2, 3, 4, 5, 6)


def cluster_snapshot(partitions: int = 100_000, per_topic: int = 1000,
                     victim: int = 1, victim_leads: int = 10_000) -> ClusterSnapshot:
    topics = []
    states = []
    led = 0
    n = len(BROKERS)
    for ti in range(partitions // per_topic):
        name = f"topic-{ti:04d}"
        parts = {}
        for p in range(per_topic):
            i = ti * per_topic + p
            reps = tuple(BROKERS[(i + k) % n] for k in range(3))
            parts[p] = reps
            leader = reps[0]
            if leader == victim:
                if led >= victim_leads:
                    leader = reps[1]
                else:
                    led += 1
            states.append(((name, p), PartitionStateZk(LeaderAndIsr(leader, 0, reps, 1), 0)))
        topics.append((name, TopicAssignment.of(parts)))
    return ClusterSnapshot(live_brokers=tuple(BrokerInfo(b, 1000 + b) for b in BROKERS),
                           topics=tuple(topics), partition_states=tuple(states))


def loaded_controller(snap: ClusterSnapshot) -> Controller:
    ctl = Controller(ControllerConfig(broker_id=2, auto_leader_rebalance_enable=False))
    for e in ctl.handle(ControllerChange(None, 0, 0)):
        if isinstance(e, ZkWrite):
            ctl.handle(WriteResult(e.token))
    out = ctl.handle(ClusterLoaded(snap))
    for e in out:
        if isinstance(e, ZkWrite):
            ctl.handle(WriteResult(e.token))
    ctl.drain_state_change_log()
    return ctl
