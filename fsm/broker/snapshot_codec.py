"""The broker core's snapshot encoding: builtins only (tuples, ints, strs, bools, None).

Pickling a frozen dataclass or an enum member goes through Python-level ``__reduce__``
code and costs ~20x more than pickling the same fields as a tuple, and the world
fingerprints pickled snapshots millions of times. So ``snapshot()`` holds plain tuples and
``restore`` rebuilds the immutable views. Decoding is memoised (views are immutable, so one
object may serve every restored core); the memo is bounded and only trades memory for time.

The layouts are named field by field below (``BrokerSnapshotFields`` and the values inside
it; ``fsm.snapshot_fields``): NamedTuple classes that only name positions, never filled.
"""

from __future__ import annotations

from typing import NamedTuple

from fsm.broker.views import (
    AppliedMark,
    MetadataPartition,
    PendingWrite,
    ReplicaRole,
    ReplicaView,
)
from fsm.broker_states import BrokerState
from fsm.snapshot_fields import positions
from fsm.values import BrokerInfo, Endpoint, LeaderAndIsr

_MEMO_LIMIT = 200_000
_memo: dict[tuple, object] = {}

ROLE_BY_VALUE = {r.value: r for r in ReplicaRole}
STATE_BY_VALUE = {s.value: s for s in BrokerState}


# ---------------------------------------------------------------- the layouts


class BrokerSnapshotFields(NamedTuple):
    """``BrokerCore.snapshot()``; each dict a tuple of ``(key, value)`` sorted by key."""

    state: str  # the ``BrokerState`` value
    epoch: int | None  # the broker epoch (czxid of its registration); None: not registered
    controller_epoch: int  # the highest applied
    replicas: tuple  # ``(tp, ReplicaFields)``
    cache: tuple  # ``MetadataCacheFields``
    pending: tuple  # ``(token, PendingWriteFields)``: its own ZooKeeper writes in flight
    shutdown_attempts: int  # ControlledShutdown requests sent in this controlled shutdown
    shutdown_wanted: bool  # SIGTERM received
    registering: bool  # ``Register`` awaits its ``BrokerRegistered``
    applied: tuple | None  # ``AppliedFields``: the last request applied, or None


class ReplicaFields(NamedTuple):
    """``encode_replica``: a ``ReplicaView`` (the same fields, the role as its value)."""

    role: str
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    zk_version: int
    replicas: tuple[int, ...]
    controller_epoch: int
    fenced: bool
    zk_seen: tuple | None  # ``ZkSeenFields``: what a failed ISR write found, or None


class ZkSeenFields(NamedTuple):
    """``ReplicaFields.zk_seen``: the partition state a failed ISR write found."""

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    controller_epoch: int
    version: int


class MetadataCacheFields(NamedTuple):
    """``MetadataCache.snapshot()``."""

    partitions: tuple  # ``(tp, MetadataPartitionFields)``
    live_brokers: tuple  # ``(broker id, fsm.snapshot_fields.BrokerInfoFields)``
    controller_id: int | None


class MetadataPartitionFields(NamedTuple):
    """``encode_metadata_partition``: a ``MetadataPartition`` (the same fields)."""

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    replicas: tuple[int, ...]
    offline_replicas: tuple[int, ...]


class PendingWriteFields(NamedTuple):
    """``encode_pending``: a ``PendingWrite`` (the same fields)."""

    kind: str
    tp: tuple[str, int]
    isr: tuple[int, ...]
    base: tuple[int, int]


class AppliedFields(NamedTuple):
    """``encode_applied``: an ``AppliedMark`` (the same fields)."""

    controller_epoch: int
    broker_epoch: int
    highest_before: int


BROKER = positions(BrokerSnapshotFields)
REPLICA = positions(ReplicaFields)
ZK_SEEN = positions(ZkSeenFields)
CACHE = positions(MetadataCacheFields)
METADATA_PARTITION = positions(MetadataPartitionFields)
PENDING = positions(PendingWriteFields)
APPLIED = positions(AppliedFields)


def _remember(key: tuple, value: object) -> None:
    if len(_memo) >= _MEMO_LIMIT:
        _memo.clear()
    _memo[key] = value


# ---------------------------------------------------------------- replica views


def encode_replica(v: ReplicaView) -> tuple:
    seen = v.zk_seen
    enc_seen = None if seen is None else (
        seen[0].leader, seen[0].leader_epoch, seen[0].isr, seen[0].controller_epoch, seen[1])
    return (v.role.value, v.leader, v.leader_epoch, v.isr, v.zk_version, v.replicas,
            v.controller_epoch, v.fenced, enc_seen)


def decode_replica(t: tuple) -> ReplicaView:
    key = ("r", t)
    view = _memo.get(key)
    if view is None:
        role, leader, le, isr, zv, replicas, ce, fenced, seen = t
        zk_seen = None if seen is None else (LeaderAndIsr(seen[0], seen[1], seen[2], seen[3]),
                                             seen[4])
        view = ReplicaView(ROLE_BY_VALUE[role], leader, le, isr, zv, replicas, ce, fenced, zk_seen)
        _remember(key, view)
    return view  # type: ignore[return-value]


# ---------------------------------------------------------------- metadata cache


def encode_metadata_partition(m: MetadataPartition) -> tuple:
    return (m.leader, m.leader_epoch, m.isr, m.replicas, m.offline_replicas)


def decode_metadata_partition(t: tuple) -> MetadataPartition:
    key = ("m", t)
    mp = _memo.get(key)
    if mp is None:
        mp = MetadataPartition(*t)
        _remember(key, mp)
    return mp  # type: ignore[return-value]


def encode_broker(b: BrokerInfo) -> tuple:
    return (b.broker_id, b.epoch,
            tuple((e.listener, e.host, e.port, e.security_protocol) for e in b.endpoints), b.rack)


def decode_broker(t: tuple) -> BrokerInfo:
    key = ("b", t)
    info = _memo.get(key)
    if info is None:
        info = BrokerInfo(t[0], t[1], tuple(Endpoint(*e) for e in t[2]), t[3])
        _remember(key, info)
    return info  # type: ignore[return-value]


def decode_brokers(t: tuple) -> dict[int, BrokerInfo]:
    """The live brokers as a dict, memoised whole: callers must never mutate it in place
    (``MetadataCache.apply`` rebinds ``live_brokers`` to a new dict)."""
    key = ("B", t)
    brokers = _memo.get(key)
    if brokers is None:
        brokers = {i: decode_broker(b) for i, b in t}
        _remember(key, brokers)
    return brokers  # type: ignore[return-value]


# ---------------------------------------------------------------- small values


def encode_pending(w: PendingWrite) -> tuple:
    return (w.kind, w.tp, w.isr, w.base)


def decode_pending(t: tuple) -> PendingWrite:
    return PendingWrite(*t)


def encode_applied(a: AppliedMark | None) -> tuple | None:
    return None if a is None else (a.controller_epoch, a.broker_epoch, a.highest_before)


def decode_applied(t: tuple | None) -> AppliedMark | None:
    if t is None:
        return None
    key = ("a", t)
    mark = _memo.get(key)
    if mark is None:
        mark = AppliedMark(*t)
        _remember(key, mark)
    return mark  # type: ignore[return-value]
