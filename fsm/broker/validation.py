"""Malformed controller requests: pure checks that return a reason (or None when valid).

The adapters decode the wire into ``fsm.requests`` values; these checks guard what a codec
cannot: duplicates, empty lists, a leader outside its replicas. Types are checked too, so
that nothing outside can make the core raise.
"""

from __future__ import annotations

from collections.abc import Iterable

from fsm.requests import LeaderAndIsrPartition, UpdateMetadataPartition
from fsm.values import LEADER_DURING_DELETE, NO_LEADER, BrokerInfo, TopicPartition

_INT_ONLY = frozenset({int})


def is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def ids_ok(ids: object) -> bool:
    """A fast accept: a non-empty tuple of distinct non-negative plain ints. A few C-level
    calls instead of a Python-level check per element (a LeaderAndIsr or UpdateMetadata of
    10,000 partitions checks 20,000-30,000 lists); False only means "ask ``ids_reason``"."""
    return (ids.__class__ is tuple and len(ids) > 0 and _INT_ONLY.issuperset(map(type, ids))
            and min(ids) >= 0 and len(set(ids)) == len(ids))  # type: ignore[arg-type]


def ids_reason(name: str, ids: object, *, empty_ok: bool) -> str | None:
    """Broker id lists: a tuple of distinct non-negative ints (non-empty unless allowed)."""
    if ids_ok(ids):
        return None
    if not isinstance(ids, tuple):
        return f"{name} is not a list"
    if not ids and not empty_ok:
        return f"{name} is empty"
    if not all(is_int(b) and b >= 0 for b in ids):
        return f"{name} holds a negative or non-integer broker id"
    if len(set(ids)) != len(ids):
        return f"{name} names a broker twice"
    return None


def tp_reason(tp: object) -> str | None:
    if (tp.__class__ is tuple and len(tp) == 2 and tp[0].__class__ is str  # type: ignore[arg-type]
            and tp[0] and tp[1].__class__ is int and tp[1] >= 0):  # type: ignore[index]
        return None  # the common case, without unpacking into isinstance calls
    if not (isinstance(tp, tuple) and len(tp) == 2):
        return "not a (topic, partition) pair"
    topic, partition = tp
    if not isinstance(topic, str) or not topic:
        return "empty or non-string topic name"
    if not is_int(partition) or partition < 0:
        return "negative or non-integer partition"
    return None


def duplicate(tps: Iterable[TopicPartition]) -> TopicPartition | None:
    """The first partition named twice, if any."""
    seen: set[TopicPartition] = set()
    for tp in tps:
        if tp in seen:
            return tp
        seen.add(tp)
    return None


def leader_and_isr_reason(p: LeaderAndIsrPartition) -> str | None:
    """A LeaderAndIsr partition state: replicas and ISR distinct and non-empty, ISR within
    the replicas, the leader -1 or a member of the ISR, epochs and version non-negative."""
    if _lai_ok(p):
        return None
    reason = (tp_reason((p.topic, p.partition))
              or ids_reason("replicas", p.replicas, empty_ok=False)
              or ids_reason("isr", p.isr, empty_ok=False))
    if reason:
        return reason
    if not set(p.isr) <= set(p.replicas):
        return "isr is not within the replicas"
    if not is_int(p.leader) or (p.leader != NO_LEADER and p.leader not in p.isr):
        return "leader is neither -1 nor in the isr"
    if not all(is_int(x) and x >= 0 for x in (p.leader_epoch, p.zk_version, p.controller_epoch)):
        return "negative or non-integer epoch or zk version"
    return None


def _lai_ok(p: LeaderAndIsrPartition) -> bool:
    """A fast accept of ``leader_and_isr_reason``'s checks (False: ask it for the reason)."""
    topic, partition, isr, replicas = p.topic, p.partition, p.isr, p.replicas
    leader = p.leader
    return (topic.__class__ is str and len(topic) > 0 and partition.__class__ is int
            and partition >= 0 and ids_ok(replicas) and ids_ok(isr)
            and set(isr).issubset(replicas) and leader.__class__ is int
            and (leader == NO_LEADER or leader in isr)
            and _INT_ONLY.issuperset(map(type, (p.leader_epoch, p.zk_version,
                                                p.controller_epoch)))
            and min(p.leader_epoch, p.zk_version, p.controller_epoch) >= 0)


def _um_ok(p: UpdateMetadataPartition) -> bool:
    """A fast accept of ``update_metadata_reason``'s checks for a partition that is not
    being deleted (False: ask it for the reason)."""
    topic, partition, leader = p.topic, p.partition, p.leader
    replicas, isr, offline = p.replicas, p.isr, p.offline_replicas
    return (topic.__class__ is str and len(topic) > 0 and partition.__class__ is int
            and partition >= 0 and ids_ok(replicas)
            and (ids_ok(isr) or (isr.__class__ is tuple and not isr))
            and (ids_ok(offline) or (offline.__class__ is tuple and not offline))
            and set(isr).issubset(replicas) and set(offline).issubset(replicas)
            and leader.__class__ is int and (leader == NO_LEADER or leader in replicas)
            and p.leader_epoch.__class__ is int and p.leader_epoch >= 0)


def update_metadata_reason(p: UpdateMetadataPartition) -> str | None:
    """An UpdateMetadata partition state. Leader -2 (being deleted) needs only its name."""
    if _um_ok(p):
        return None
    reason = tp_reason((p.topic, p.partition))
    if reason or p.leader == LEADER_DURING_DELETE:
        return reason
    reason = (ids_reason("replicas", p.replicas, empty_ok=False)
              or ids_reason("isr", p.isr, empty_ok=True)
              or ids_reason("offline replicas", p.offline_replicas, empty_ok=True))
    if reason:
        return reason
    if not (set(p.isr) <= set(p.replicas) and set(p.offline_replicas) <= set(p.replicas)):
        return "isr or offline replicas not within the replicas"
    if not is_int(p.leader) or (p.leader != NO_LEADER and p.leader not in p.replicas):
        return "leader is neither -1 nor a replica"
    if not is_int(p.leader_epoch) or p.leader_epoch < 0:
        return "negative or non-integer leader epoch"
    return None


def live_brokers_reason(brokers: object) -> str | None:
    if not isinstance(brokers, tuple) or not all(isinstance(b, BrokerInfo) for b in brokers):
        return "live brokers is not a list of brokers"
    return ids_reason("live brokers", tuple(b.broker_id for b in brokers), empty_ok=True)
