"""ISR changes by a partition leader (seed 001 section G, "multiple leaders" §3).

A leader that wants another ISR writes the partition state *conditionally on the znode
version it holds* (``SetDataOp(version=zk_version)``), keeping its leader epoch and the
partition's controller epoch. One write per partition may be in flight.

* committed -> it adopts the ISR and ``zk_version + 1``, then writes an ISR change
  notification (``/isr_change_notification/isr_change_<seq>``) for the controller;
* failed (BadVersion: the controller or a newer leader wrote the state; NoNode: deleted)
  -> it is *fenced*: it stops acting as leader (``believes_leader`` is False, it can no
  longer commit) until a LeaderAndIsr or startup recovery tells it what it is;
* failed with ``ConnectionLoss`` (the executor's code for a write its lost ZooKeeper
  connection did not commit: ``adapters.broker.effects``) -> nobody else wrote the state:
  the leader keeps acting with its ISR and version, which are still ZooKeeper's (no
  LeaderAndIsr would ever come to unfence it: found by the checker, scenario
  ``zookeeper-disconnect``). The ISR change is not made; whoever wants it asks again.

An ISR change notification that fails with ``ConnectionLoss`` is owed, not dropped (the
committed ISR change must reach the controller, or its cache and every broker's metadata
keep the old ISR): it is kept as a ``"notify-owed"`` entry and written again when the
ISR_CHANGE_PROPAGATION timer fires (Kafka's ``ReplicaManager`` keeps pending ISR changes
and propagates them periodically, its ZooKeeper client retrying until connected).

A result that comes back after the replica's state moved on (a newer LeaderAndIsr, a
StopReplica(delete), a recovery) is ignored: it says nothing about the current view.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsm import zk_paths
from fsm.broker.replicas import fenced, with_isr
from fsm.broker.validation import ids_reason, is_int, tp_reason
from fsm.broker.views import PendingWrite, ReplicaRole
from fsm.effects import BrokerEffect, BrokerZkWrite, CreateOp, SetDataOp, StartTimer
from fsm.events import BrokerWriteResult, IsrChangeWanted, TimerKind
from fsm.values import LeaderAndIsr, TopicPartition
from fsm.znodes import IsrChangeZnode

if TYPE_CHECKING:
    from fsm.broker.core import BrokerCore

NOTIFICATION_PATH = zk_paths.isr_change(zk_paths.ISR_CHANGE_PREFIX)
CONNECTION_LOSS = "ConnectionLoss"
"""A write the executor could not commit because the ZooKeeper connection was lost."""
OWED = "notify-owed"
PROPAGATION = TimerKind.ISR_CHANGE_PROPAGATION


def _token(core: BrokerCore) -> int:
    """The smallest token not in flight: bounded, so states without writes in flight do not
    differ by a counter (the model checker would never see the same state twice)."""
    token = 1
    while token in core._pending:
        token += 1
    return token


def want_isr_change(core: BrokerCore, ev: IsrChangeWanted) -> list[BrokerEffect]:
    tp, isr = ev.tp, ev.isr
    reason = tp_reason(tp) or ids_reason("isr", isr, empty_ok=False)
    if reason is not None:
        core._record("rejected", "isr change", reason)
        return []
    label = f"{tp[0]}-{tp[1]}"
    if not core.is_serving or not core.believes_leader(tp):
        core._record("ignored", label, "ISR change wanted but not acting leader")
        return []
    view = core._replicas[tp]
    if core.config.broker_id not in isr or not set(isr) <= set(view.replicas):
        core._record("rejected", label, f"ISR {list(isr)} must hold the leader, within replicas")
        return []
    if isr == view.isr:
        return []
    if any(w.kind == "isr" and w.tp == tp for w in core._pending.values()):
        core._record("ignored", label, "an ISR write is already in flight")
        return []
    token = _token(core)
    core._pending[token] = PendingWrite("isr", tp, isr, view.freshness)
    data = LeaderAndIsr(core.config.broker_id, view.leader_epoch, isr, view.controller_epoch)
    core._record("isr", label, f"write ISR {list(isr)} if version {view.zk_version}")
    return [BrokerZkWrite(token, (SetDataOp(zk_paths.partition_state(*tp), data,
                                            version=view.zk_version),))]


def write_result(core: BrokerCore, ev: BrokerWriteResult) -> list[BrokerEffect]:
    token = ev.token
    pending = core._pending.pop(token, None) if is_int(token) else None
    if pending is None:
        core._record("ignored", "write result", f"unknown token {token!r}")
        return []
    tp = pending.tp
    label = f"{tp[0]}-{tp[1]}"
    # any failure, or an answer the executor could not even shape, means "not committed"
    failures = ev.failures if isinstance(ev.failures, tuple) else (None,)
    failure = failures[0] if failures else None
    code = getattr(failure, "code", "malformed result")
    if pending.kind == "notify":
        if failures and code == CONNECTION_LOSS:
            owed = any(w.kind == OWED for w in core._pending.values())
            core._pending[token] = PendingWrite(OWED, tp)
            core._record("isr", label, "ISR change notification not written (connection "
                         "lost): owed, written again by the propagation timer")
            return [] if owed else [StartTimer(PROPAGATION,
                                               core.config.isr_change_propagation_ms)]
        if failures:
            core._record("rejected", label, f"ISR change notification failed: {code}")
        return []
    view = core._replicas.get(tp)
    if view is None or view.freshness != pending.base or view.role is ReplicaRole.FOLLOWER:
        core._record("ignored", label, "ISR write result for a superseded view")
        return []
    if failures and code == CONNECTION_LOSS:
        core._record("isr", label, "ISR write not committed (connection lost): still leader, "
                     f"ISR {list(view.isr)} at version {view.zk_version}")
        return []
    if failures:
        seen = None
        current = getattr(failure, "current", None)
        version = getattr(failure, "current_version", -1)
        if isinstance(current, LeaderAndIsr) and is_int(version):
            seen = (current, version)
        core._replicas[tp] = fenced(view, seen)
        core._record("isr", label, f"ISR write failed ({code}): stop acting as leader")
        return []
    core._replicas[tp] = with_isr(view, pending.isr, view.zk_version + 1)
    core._record("isr", label, f"ISR now {list(pending.isr)} at version {view.zk_version + 1}")
    return [_notification(core, tp)]


def propagate(core: BrokerCore) -> list[BrokerEffect]:
    """ISR_CHANGE_PROPAGATION fired: write every owed ISR change notification again."""
    owed = sorted((t, w.tp) for t, w in core._pending.items() if w.kind == OWED)
    if not owed:
        return core._ignore("timer isr-change-propagation (nothing owed)")
    for t, _tp in owed:
        del core._pending[t]
    return [_notification(core, tp) for _t, tp in owed]


def _notification(core: BrokerCore, tp: TopicPartition) -> BrokerZkWrite:
    token = _token(core)
    core._pending[token] = PendingWrite("notify", tp)
    return BrokerZkWrite(token, (CreateOp(NOTIFICATION_PATH, IsrChangeZnode((tp,)),
                                          sequential=True),))
