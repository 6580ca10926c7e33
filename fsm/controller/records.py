"""Small immutable records the controller keeps: state-change log entries, the decision
for one partition state write, and the round of writes it awaits (``Round``, part of a
snapshot so a world may be copied while a write is in flight; ``Controller.snapshot``
flattens it to plain tuples).

Bulk transitions (a broker failure moving 50,000 replicas Online -> Offline) are logged
as one ``StateChange`` per group of identical transitions (same kind, source, target and
reason) whose ``entity`` is an ``Entities`` tuple naming every entity that changed, in
order; ``StateChange.entities`` gives the entities of any record, batched or not."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import NamedTuple

from fsm.effects import CheckOp, CreateOp, DeleteOp, SetDataOp, ZkOp
from fsm.partition_states import partition_label
from fsm.replica_states import replica_label
from fsm.values import LeaderAndIsr, TopicAssignment, TopicPartition
from fsm.znodes import ControllerEpochZnode, ControllerZnode, ReassignmentZnode


class Entities(tuple):
    """Several entities that made the same transition, logged as one ``StateChange``."""

    __slots__ = ()


def _entity_label(e: object) -> str:
    if isinstance(e, tuple) and len(e) == 2 and isinstance(e[0], tuple):
        (t, p), b = e
        return replica_label(t, p, b)
    if isinstance(e, tuple) and len(e) == 2 and isinstance(e[0], str):
        return partition_label(e[0], e[1])
    return "" if e is None else str(e)


class StateChange(NamedTuple):
    """One line of the state-change log. ``entity`` is a topic-partition, a
    ``(topic-partition, broker)`` pair, a topic name, a broker id, None, or an ``Entities``
    tuple of those (a batch of identical transitions); ``label`` prints it."""

    kind: str  # "partition", "replica", "session", "leader" (a committed decision: the
    # state before, the state written, the decision kind), "isr" (an ISR change taken from
    # the leader), "rejected", "illegal", "gave-up", "info" ("session": a move of the
    # controller's ZooKeeper session, entity None, source and target ``ZkClientState``);
    # "loaded" / "forgotten": a partition or replica state entering memory from ZooKeeper
    # (the failover load) or leaving it (a vanished topic) -- not a move of the table
    entity: object
    source: object  # a state enum member, a value or ""
    target: object
    reason: str

    @property
    def entities(self) -> tuple:
        """Every entity this record names (one, or the members of a batch)."""
        e = self.entity
        return tuple(e) if isinstance(e, Entities) else (e,)

    @property
    def label(self) -> str:
        e = self.entity
        if isinstance(e, Entities):
            return ", ".join(_entity_label(x) for x in e)
        return _entity_label(e)

    def __str__(self) -> str:
        src = getattr(self.source, "value", self.source)
        dst = getattr(self.target, "value", self.target)
        return f"[{self.kind}] {self.label}: {src} -> {dst} ({self.reason})"


new_record = tuple.__new__
"""``new_record(StateChange, (kind, entity, source, target, reason))``: a ``StateChange``
without the keyword-handling ``__new__`` (hot loops)."""


# Decision kinds (what to re-decide when a write meets a BadVersion).
INIT = "init"  # new partition: leader = first live replica, ISR = live replicas
OFFLINE = "offline"  # repair against dead brokers / elect for offline partitions
SHUTDOWN = "shutdown"  # controlled shutdown of broker ``arg``
PREFERRED = "preferred"  # move leadership to the preferred replica
REASSIGN_EPOCH = "reassign-epoch"  # reassignment expansion: bump the leader epoch
REASSIGN_DONE = "reassign-done"  # reassignment contraction: leader in target, ISR within target


class Decision(NamedTuple):
    """A partition state write: the new value, the expected znode version (``create``: the
    state znode does not exist yet) and what was decided, to decide again on BadVersion."""

    kind: str
    arg: int
    leader_and_isr: LeaderAndIsr
    expected_version: int
    create: bool = False


@dataclass(frozen=True, slots=True)
class Round:
    """The write the controller awaits. ``followups`` are small tuples naming the requests
    and replies to produce once it committed (see ``fsm.controller.request_batch``)."""

    token: int
    kind: str  # "election" | "partitions"
    decisions: tuple[tuple[TopicPartition, Decision], ...] = ()
    ops: tuple[ZkOp, ...] = ()
    followups: tuple[tuple, ...] = ()
    retry: bool = False
    election: tuple[int, int] = (0, 0)  # (epoch, epoch_version) read before the attempt


# ---------------------------------------------------------------- Round <-> plain tuples

_OPS: dict[str, type] = {c.__name__: c for c in (CreateOp, SetDataOp, DeleteOp, CheckOp)}
_DATA: dict[str, type] = {c.__name__: c for c in (
    LeaderAndIsr, TopicAssignment, ReassignmentZnode, ControllerZnode, ControllerEpochZnode)}
_FIELDS: dict[type, tuple[str, ...]] = {
    c: tuple(f.name for f in fields(c)) for c in (*_OPS.values(), *_DATA.values())}


def _encode_data(data: object) -> tuple:
    """Op data -> ``(class name, *fields)`` (fields are plain builtins) or ``("", data)``."""
    names = _FIELDS.get(type(data))
    if names is None:
        return ("", data)
    return (type(data).__name__, *(getattr(data, n) for n in names))


def _decode_data(flat: tuple) -> object:
    return flat[1] if flat[0] == "" else _DATA[flat[0]](*flat[1:])


def _encode_op(op: ZkOp) -> tuple:
    out = [type(op).__name__]
    for n in _FIELDS[type(op)]:
        v = getattr(op, n)
        out.append(_encode_data(v) if n == "data" else v)
    return tuple(out)


def _decode_op(flat: tuple) -> ZkOp:
    cls = _OPS[flat[0]]
    args = [_decode_data(v) if n == "data" else v for n, v in
            zip(_FIELDS[cls], flat[1:], strict=True)]
    return cls(*args)


def encode_round(r: Round | None) -> tuple | None:
    """A ``Round`` as plain builtins (canonical: a Round is already a value)."""
    if r is None:
        return None
    decisions = tuple([
        (tp, d.kind, d.arg, li.leader, li.leader_epoch, li.isr, li.controller_epoch,
         d.expected_version, d.create)
        for tp, d in r.decisions for li in (d.leader_and_isr,)])
    return (r.token, r.kind, decisions, tuple([_encode_op(op) for op in r.ops]), r.followups,
            r.retry, r.election)


def decode_round(flat: tuple | None) -> Round | None:
    if flat is None:
        return None
    token, kind, decisions, ops, followups, retry, election = flat
    return Round(token, kind, tuple([
        (tp, Decision(k, arg, LeaderAndIsr(leader, le, isr, ce), version, create))
        for tp, k, arg, leader, le, isr, ce, version, create in decisions]),
        tuple([_decode_op(op) for op in ops]), followups, retry, election)
