"""The names of the snapshot layouts match their producers: as many names as fields, and
each named field holds what its name says (read back through the restored object), for the
controller, the broker core, ZooKeeper, the world's own ``rest`` and the world itself; the
snapshots themselves stay plain tuples (``fsm.snapshot_fields``)."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable

import pytest

from fsm.broker import BrokerCore
from fsm.broker.snapshot_codec import (
    APPLIED,
    BROKER,
    CACHE,
    REPLICA,
    ZK_SEEN,
    AppliedFields,
    BrokerSnapshotFields,
    MetadataCacheFields,
    MetadataPartitionFields,
    PendingWriteFields,
    ReplicaFields,
    ZkSeenFields,
)
from fsm.broker.views import AppliedMark, MetadataPartition, PendingWrite, ReplicaView
from fsm.controller import Controller, ControllerConfig
from fsm.controller.snapshot_fields import (
    CONTEXT,
    CONTROLLER,
    FOLLOWUP_FIELDS,
    OWED,
    PARTITION_STATE,
    ROUND,
    ContextFields,
    ControllerSnapshotFields,
    DecisionFields,
    OwedFields,
    PartitionStateFields,
    RoundFields,
)
from fsm.events import (
    BrokerChange,
    ClusterLoaded,
    ControllerChange,
    Startup,
    WriteFailure,
    WriteResult,
)
from fsm.snapshot_fields import BROKER_INFO, BrokerInfoFields
from fsm.values import (
    BrokerInfo,
    ClusterSnapshot,
    LeaderAndIsr,
    PartitionStateZk,
    TopicAssignment,
)
from model_check.scenario import load
from model_check.start import start
from model_check.world import World
from model_check.world.codec import decode
from model_check.world.cores import restore_broker, restore_controller
from model_check.world.state import Proc
from model_check.world.world import (
    PROC,
    REST,
    TIMER,
    RestBase,
    RestSnapshotFields,
    TimerFields,
    world_layout,
)
from model_check.world.zookeeper import ZNODE, ZOOKEEPER, Znode, ZooKeeperSnapshotFields

SCENARIOS = ("standard", "deletion", "reassign-expand", "zookeeper-disconnect",
             "broker-lifecycle", "mutants-isr")


def _worlds(name: str, walks: int = 8, seed: int = 3) -> list[World]:
    """Worlds along seeded random walks of a shipped scenario."""
    st = start(load(name))
    rng = random.Random(seed)
    out = []
    for _ in range(walks):
        w = World.restore(st.snapshot, st.config)
        for _step in range(rng.randrange(5, 40)):
            acts = w.enabled_actions()
            if not acts:
                break
            w.apply(rng.choice(acts))
            out.append(World.restore(w.snapshot(), st.config))
    return out


def _names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls))


def test_the_layouts_of_values_have_the_fields_of_the_values() -> None:
    assert ReplicaFields._fields == _names(ReplicaView)
    assert MetadataPartitionFields._fields == _names(MetadataPartition)
    assert PendingWriteFields._fields == _names(PendingWrite)
    assert AppliedFields._fields == _names(AppliedMark)
    assert BrokerInfoFields._fields == _names(BrokerInfo)
    assert ZkSeenFields._fields == (*_names(LeaderAndIsr), "version")
    assert RestBase._fields == ("snap", *RestSnapshotFields._fields)


def _check_controller(snap: tuple, restore: Callable[[tuple], Controller]) -> None:
    assert type(snap) is tuple and len(snap) == len(ControllerSnapshotFields._fields)
    c = restore(snap)
    assert c.snapshot() == snap
    assert snap[CONTROLLER.active] == c.is_active
    assert snap[CONTROLLER.epoch] == c.epoch
    assert snap[CONTROLLER.session] == c.session_state.value
    rnd = snap[CONTROLLER.round]
    assert (rnd is None) == (c.awaiting_write is None)
    if rnd is not None:
        assert len(rnd) == len(RoundFields._fields) and rnd[ROUND.token] == c.awaiting_write
        assert all(len(d) == len(DecisionFields._fields) for d in rnd[ROUND.decisions])
        for f in rnd[ROUND.followups]:
            assert len(f) == len(FOLLOWUP_FIELDS[f[0]]), f
    ctx = snap[CONTROLLER.context]
    assert len(ctx) == len(ContextFields._fields)
    live = {e[BROKER_INFO.broker_id]: e[BROKER_INFO.epoch] for e in ctx[CONTEXT.live]}
    assert all(len(e) == len(BrokerInfoFields._fields) for e in ctx[CONTEXT.live])
    assert live == c.live_brokers()
    assert set(ctx[CONTEXT.shutting_down]) == c.shutting_down()
    assert dict(ctx[CONTEXT.reassignments]) == c.reassignments()
    assert set(ctx[CONTEXT.to_delete]) == c.topics_to_delete()
    assert set(ctx[CONTEXT.ineligible]) == c.topics_ineligible()
    for tp, st in ctx[CONTEXT.states]:
        assert len(st) == len(PartitionStateFields._fields)
        lai = c.leader_and_isr(tp)
        assert (st[PARTITION_STATE.leader], st[PARTITION_STATE.leader_epoch],
                st[PARTITION_STATE.isr], st[PARTITION_STATE.controller_epoch]) == \
            (lai.leader, lai.leader_epoch, lai.isr, lai.controller_epoch)
        assert st[PARTITION_STATE.version] == c.partition_zk_version(tp)
    for tp, owed in ctx[CONTEXT.owed]:
        assert len(owed) == len(OwedFields._fields)
        assert (owed[OWED.kind], owed[OWED.arg], owed[OWED.due]) == c.ctx.owed[tp]


def _check_broker(snap: tuple, b: int, config: object) -> None:
    assert type(snap) is tuple and len(snap) == len(BrokerSnapshotFields._fields)
    core: BrokerCore = restore_broker(snap, config, b)  # type: ignore[arg-type,assignment]
    assert core.snapshot() == snap
    assert snap[BROKER.state] == core.state.value
    assert snap[BROKER.epoch] == core.epoch
    assert snap[BROKER.controller_epoch] == core.controller_epoch
    assert snap[BROKER.shutdown_attempts] == core.shutdown_attempts
    replicas = dict(core.replicas())
    for tp, r in snap[BROKER.replicas]:
        view = replicas[tp]
        assert len(r) == len(ReplicaFields._fields) and r[REPLICA.role] == view.role.value
        for name in ReplicaFields._fields:
            if name not in ("role", "zk_seen"):
                assert r[getattr(REPLICA, name)] == getattr(view, name), name
        seen = r[REPLICA.zk_seen]
        assert (seen is None) == (view.zk_seen is None)
        if seen is not None:
            lai, version = view.zk_seen
            assert (seen[ZK_SEEN.leader], seen[ZK_SEEN.isr], seen[ZK_SEEN.version]) == \
                (lai.leader, lai.isr, version)
    cache = snap[BROKER.cache]
    assert len(cache) == len(MetadataCacheFields._fields)
    assert cache[CACHE.controller_id] == core.controller_id
    for _tp, m in cache[CACHE.partitions]:
        assert len(m) == len(MetadataPartitionFields._fields)
    for i, info in cache[CACHE.live_brokers]:
        assert info[BROKER_INFO.broker_id] == i
    assert len(snap[BROKER.pending]) == len(core.pending_writes)
    applied = snap[BROKER.applied]
    if applied is not None:
        mark = core.applied
        assert mark is not None and applied[APPLIED.broker_epoch] == mark.broker_epoch
        assert applied[APPLIED.controller_epoch] == mark.controller_epoch


def _check_world(w: World) -> None:
    ids = w.config.broker_ids
    snap = w.snapshot()
    layout = world_layout(len(ids))
    assert len(snap) == layout.size
    zk = snap[layout.zookeeper]
    assert zk == w.zk.snapshot() and len(zk) == len(ZooKeeperSnapshotFields._fields)
    assert (zk[ZOOKEEPER.zxid], zk[ZOOKEEPER.next_session]) == (w.zk.zxid, w.zk.next_session)
    assert set(zk[ZOOKEEPER.sessions]) == w.zk.sessions
    assert set(zk[ZOOKEEPER.data_watches]) == w.zk.data_watches
    assert set(zk[ZOOKEEPER.child_watches]) == w.zk.child_watches
    assert list(decode(zk[ZOOKEEPER.pending])) == list(w.zk.pending)
    for path, enc in zk[ZOOKEEPER.nodes]:
        node = w.zk.nodes[path]
        assert len(enc) == 1 + len(Znode._fields)
        assert (enc[ZNODE.czxid], enc[ZNODE.owner], enc[ZNODE.children]) == \
            (node.czxid, node.owner, node.children)
    assert snap[layout.channels] == w.channels.snapshot()
    for i, b in enumerate(ids):
        assert snap[layout.controllers][i] == w.controllers[b].snapshot()
        assert snap[layout.brokers][i] == w.brokers[b].snapshot()  # type: ignore[attr-defined]
    rest = snap[layout.rest]
    assert len(rest) == len(RestSnapshotFields._fields)
    for i, b in enumerate(ids):
        p = rest[REST.procs][i]
        assert len(p) == len(Proc._fields) and p == tuple(w.procs[b])
        assert p[PROC.controller_session] == w.procs[b].controller_session
    assert all(len(t) == len(TimerFields._fields) for t in rest[REST.timers])
    assert {(t[TIMER.broker], t[TIMER.role], t[TIMER.kind]) for t in rest[REST.timers]} == \
        w.timers
    assert set(rest[REST.admin]) == w.admin_done and dict(rest[REST.used]) == w.used
    assert dict(rest[REST.accepted]) == w.accepted


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_names_match_the_producers_on_explored_worlds(name: str) -> None:
    for w in _worlds(name):
        _check_world(w)
        snap = w.snapshot()
        layout = world_layout(len(w.config.broker_ids))
        for i, b in enumerate(w.config.broker_ids):
            _check_controller(snap[layout.controllers][i],
                              lambda s, b=b, cfg=w.config: restore_controller(s, cfg, b))
            _check_broker(snap[layout.brokers][i], b, w.config)


def _answer(ctl: Controller, _effects: list) -> None:
    """Answer every write with success until the controller stops writing."""
    while ctl.awaiting_write is not None:
        ctl.handle(WriteResult(ctl.awaiting_write))


def test_a_round_in_flight_and_an_owed_decision_are_named() -> None:
    """A controller awaiting a write holds its round; one whose partition state write
    failed twice owes the decision (seed 001 A 3.3): both laid out as named."""
    ctl = Controller(ControllerConfig(broker_id=1))
    ctl.handle(Startup())
    _answer(ctl, ctl.handle(ControllerChange(None, 0, 0)))
    live = tuple(BrokerInfo(b, 100 + b) for b in (1, 2, 3))
    state = PartitionStateZk(LeaderAndIsr(1, 0, (1, 2, 3), 1), 0)
    _answer(ctl, ctl.handle(ClusterLoaded(ClusterSnapshot(
        live_brokers=live, topics=(("t", TopicAssignment.of({0: (1, 2, 3)})),),
        partition_states=((("t", 0), state),)))))
    assert ctl.is_active and ctl.awaiting_write is None
    ctl.handle(BrokerChange(live[1:]))  # broker 1, the leader, fails: a state write
    snap = ctl.snapshot()
    assert snap[CONTROLLER.round] is not None
    _check_controller(snap, lambda s: Controller.restore(s, ctl.config))
    path = "/brokers/topics/t/partitions/0/state"
    for version, isr in ((1, (1, 3)), (2, (1, 2, 3))):  # a paused leader changes its ISR
        token = ctl.awaiting_write
        assert token is not None
        ctl.handle(WriteResult(token, failures=(
            WriteFailure(path, "BadVersion", LeaderAndIsr(1, 0, isr, 1), version),)))
    snap = ctl.snapshot()
    assert snap[CONTROLLER.context][CONTEXT.owed] and snap[CONTROLLER.round] is None
    _check_controller(snap, lambda s: Controller.restore(s, ctl.config))
