"""Drive a controller directly with event values (no world, no ZooKeeper)."""

from __future__ import annotations

from fsm.controller import Controller, ControllerConfig
from fsm.effects import SendRequest, ZkWrite
from fsm.events import (
    BrokerChange,
    ClusterLoaded,
    ControllerChange,
    Startup,
    WriteResult,
)
from fsm.requests import LeaderAndIsrRequest, StopReplicaRequest, UpdateMetadataRequest
from fsm.values import (
    BrokerInfo,
    ClusterSnapshot,
    LeaderAndIsr,
    PartitionStateZk,
    TopicAssignment,
)


def brokers(*ids: int, epoch: int = 100) -> tuple[BrokerInfo, ...]:
    return tuple(BrokerInfo(b, epoch + b) for b in ids)


def writes(effects: list) -> list[ZkWrite]:
    return [e for e in effects if isinstance(e, ZkWrite)]


def sends(effects: list, kind: type | None = None) -> list[SendRequest]:
    return [e for e in effects if isinstance(e, SendRequest)
            and (kind is None or isinstance(e.request, kind))]


def lai_to(effects: list, broker: int) -> LeaderAndIsrRequest | None:
    got = [e.request for e in sends(effects, LeaderAndIsrRequest) if e.broker_id == broker]
    assert len(got) <= 1
    return got[0] if got else None


def stops(effects: list, broker: int, delete: bool) -> StopReplicaRequest | None:
    got = [e.request for e in sends(effects, StopReplicaRequest)
           if e.broker_id == broker and e.request.delete_partitions == delete]
    assert len(got) <= 1
    return got[0] if got else None


def ums(effects: list) -> list[SendRequest]:
    return sends(effects, UpdateMetadataRequest)


def feed(ctl: Controller, event, results=None) -> list:
    """Handle ``event``; answer every ZkWrite with success (or ``results(write)``) until
    the controller stops writing. Returns all effects, in order."""
    out = list(ctl.handle(event))
    rounds = 0
    while True:
        ws = writes(out[-1:]) if out else []
        if not ws or ctl.awaiting_write is None:
            return out
        rounds += 1
        assert rounds < 10
        w = ws[0]
        res = results(w) if results else WriteResult(w.token)
        out.extend(ctl.handle(res))


def state(leader: int, isr: tuple[int, ...], epoch: int = 0, version: int = 0,
          ce: int = 1) -> PartitionStateZk:
    return PartitionStateZk(LeaderAndIsr(leader, epoch, isr, ce), version)


def active(live=(1, 2, 3), topics=None, states=None, config: ControllerConfig | None = None,
           **snap) -> Controller:
    """A controller started (its session CONNECTED), elected (epoch 1, fence version 1) and
    loaded with the given cluster. ``topics``: {name: {p: replicas}}; states default to
    leader = first live replica."""
    ctl = Controller(config or ControllerConfig(broker_id=1))
    assert ctl.handle(Startup()) == []
    feed(ctl, ControllerChange(None, 0, 0))
    assert ctl.is_active
    topics = topics if topics is not None else {"t": {0: (1, 2, 3), 1: (2, 3, 1)}}
    if states is None:
        states = {}
        for name, parts in topics.items():
            for p, reps in parts.items():
                livereps = tuple(r for r in reps if r in live)
                states[(name, p)] = state(livereps[0] if livereps else -1, livereps or reps)
    cs = ClusterSnapshot(
        live_brokers=brokers(*live),
        topics=tuple((n, TopicAssignment.of(p)) for n, p in topics.items()),
        partition_states=tuple(states.items()),
        **snap)
    feed(ctl, ClusterLoaded(cs))
    return ctl


def broker_change(ctl: Controller, *ids: int, bounced: dict[int, int] | None = None):
    cur = ctl.live_brokers()
    infos = []
    for b in ids:
        ep = (bounced or {}).get(b, cur.get(b, 100 + b))
        infos.append(BrokerInfo(b, ep))
    return feed(ctl, BrokerChange(tuple(infos)))


def no_illegal(ctl: Controller) -> None:
    bad = [str(r) for r in ctl.state_change_log if r.kind == "illegal"]
    assert not bad, bad
