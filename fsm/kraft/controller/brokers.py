"""Broker membership: BrokerRegistration, BrokerHeartbeat, UnregisterBroker, and the lease
that fences a broker which stops heartbeating (seed 004, "Broker Registration and State
Management").

* **Registration**: the broker epoch is the offset its ``RegisterBrokerRecord`` takes, so it
  is above every earlier epoch of that id. The same incarnation id again is a retry of a lost
  answer: the same epoch, nothing appended. Another incarnation while the old one still has a
  valid session -- unfenced and its lease running (``ctl.has_live_session``, Kafka's
  ``BrokerHeartbeatManager.hasValidSession`` as ``ClusterControlManager.registerBroker``
  asks it) -- is ``DUPLICATE_BROKER_REGISTRATION``. A fenced one has no session: a broker
  restarted right after its controlled shutdown (which fenced it) registers at once, its
  lease notwithstanding. A new registration is fenced.
* **Heartbeat**: renews the lease. A fenced broker is unfenced once it does not want to be
  fenced and has replayed the metadata up to its own registration record (Kafka's
  caught-up test: ``current_metadata_offset >= broker epoch``).
* **Controlled shutdown** takes two steps, as Kafka's ``BrokerHeartbeatManager``
  (``calculateNextBrokerState``) and ``ReplicationControlManager`` (``processBrokerHeartbeat``)
  take it:

  1. UNFENCED -> CONTROLLED_SHUTDOWN: a heartbeat ``want_shut_down`` from a broker that leads
     partitions moves every leadership off it, takes it out of every ISR it can leave and
     marks it in controlled shutdown (``BrokerRegistrationChangeRecord``), in one batch; the
     offset of that batch's last record is its *controlled-shutdown offset* (soft state,
     ``ctl.shutdown_offsets``). The answer (once committed) is not ``should_shut_down``.
  2. CONTROLLED_SHUTDOWN -> SHUTDOWN_NOW: a later heartbeat, once the broker leads nothing and
     every other *active* broker (unfenced, not shutting down) has reported a metadata offset
     at or past the controlled-shutdown offset -- they have seen the leaderships move. That
     heartbeat fences the broker (out of every ISR, ``FenceBrokerRecord``) and is answered
     ``should_shut_down`` once the fence is committed.

  A broker that leads nothing (or wants to be fenced as well) goes UNFENCED -> SHUTDOWN_NOW
  in one heartbeat: fenced at once, ``should_shut_down``. A fenced one is told to shut down
  and nothing is written.
* **Reported offsets**: Kafka remembers every broker's last reported metadata offset; only
  those at or past the lowest controlled-shutdown offset waiting can ever let a shutdown go
  on (a controlled-shutdown offset is the log end when it is taken, above every offset a
  broker can have replayed), so the controller keeps only those (``ctl.reported``): no
  shutdown waiting, nothing kept.
* **Lease expiry**: a ``Tick`` past a broker's lease fences it, with the same partition
  changes as a controlled shutdown."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fsm.errors import ErrorCode
from fsm.kraft.controller import partition_change as pc
from fsm.kraft.controller.requests import (
    BrokerHeartbeatRequest,
    BrokerHeartbeatResponse,
    BrokerRegistrationRequest,
    BrokerRegistrationResponse,
    UnregisterBrokerRequest,
    UnregisterBrokerResponse,
)
from fsm.kraft.records.values import (
    FENCE_CHANGE_NONE,
    BrokerRegistrationChangeRecord,
    FenceBrokerRecord,
    RegisterBrokerRecord,
    UnfenceBrokerRecord,
    UnregisterBrokerRecord,
)

if TYPE_CHECKING:
    from collections.abc import Hashable

    from fsm.kraft.controller.quorum_controller import QuorumController


def partitions_without(ctl: QuorumController, broker: int) -> list[Any]:
    """The changes that take ``broker`` out of every ISR and leadership."""
    def usable(b: int) -> bool:
        return b != broker and ctl.usable(b)

    out = []
    for tid, t in ctl.image.topics.items():
        for pid, p in t.partitions.items():
            if broker in p.isr or p.leader == broker:
                rec = pc.without_broker(tid, pid, p, broker, usable)
                if rec is not None:
                    out.append(rec)
    return out


def partitions_led_again(ctl: QuorumController, broker: int) -> list[Any]:
    """Leaderless partitions with ``broker`` in their ISR, once it is usable again."""
    def usable(b: int) -> bool:
        return b == broker or ctl.usable(b)

    out = []
    for tid, t in ctl.image.topics.items():
        for pid, p in t.partitions.items():
            if p.leader == -1 and broker in p.isr:
                rec = pc.with_broker_back(tid, pid, p, usable)
                if rec is not None:
                    out.append(rec)
    return out


def leads_anything(ctl: QuorumController, broker: int) -> bool:
    return any(p.leader == broker for t in ctl.image.topics.values()
               for p in t.partitions.values())


def _unsupported_feature(ctl: QuorumController, r: BrokerRegistrationRequest) -> str | None:
    offered = {f.name: f for f in r.features}
    for name, (_, level) in sorted(ctl.image.features.items()):
        f = offered.get(name)
        if f is None or not f.min_supported_version <= level <= f.max_supported_version:
            return name
    return None


def register(ctl: QuorumController, token: Hashable, r: BrokerRegistrationRequest) -> None:
    if r.cluster_id != ctl.config.cluster_id:
        ctl.reply(token, BrokerRegistrationResponse(ErrorCode.INCONSISTENT_CLUSTER_ID))
        return
    if _unsupported_feature(ctl, r) is not None:
        ctl.reply(token, BrokerRegistrationResponse(ErrorCode.UNSUPPORTED_VERSION))
        return
    old = ctl.image.brokers.get(r.broker_id)
    if old is not None and old.incarnation_id == r.incarnation_id:
        ctl.touch(r.broker_id)
        ctl.reply(token, BrokerRegistrationResponse(ErrorCode.NONE, old.epoch))
        return
    if old is not None and ctl.has_live_session(r.broker_id):
        ctl.reply(token, BrokerRegistrationResponse(ErrorCode.DUPLICATE_BROKER_REGISTRATION))
        return
    records: list[Any] = []
    if old is not None and not old.fenced:  # the old incarnation is gone: hand its work over
        records += partitions_without(ctl, r.broker_id)
    epoch = ctl.next_offset + len(records)
    records.append(RegisterBrokerRecord(r.broker_id, r.incarnation_id, epoch, r.listeners,
                                        r.features, r.rack, fenced=True))
    ctl.append(records, _registration_reason(ctl, old, r.broker_id))
    _forget(ctl, r.broker_id)
    ctl.touch(r.broker_id)
    ctl.reply(token, BrokerRegistrationResponse(ErrorCode.NONE, epoch))


REGISTERED = "registration"
REPLACES_ENDED = "registration: a new incarnation; the old one's lease ran out"
REPLACES_FENCED = "registration: a new incarnation; the old one fenced, its lease still running"
REGISTRATION_REASONS = (REGISTERED, REPLACES_ENDED, REPLACES_FENCED)
"""The reasons a ``RegisterBrokerRecord`` is written with (the state-change log's, and the
checker's coverage: ``model_check.kraft.coverage``)."""


def _registration_reason(ctl: QuorumController, old: Any, broker: int) -> str:
    if old is None:
        return REGISTERED
    deadline = ctl.leases.get(broker)
    return REPLACES_FENCED if deadline is not None and ctl.now_ms < deadline \
        else REPLACES_ENDED


def heartbeat(ctl: QuorumController, token: Hashable, r: BrokerHeartbeatRequest) -> None:
    reg = ctl.image.brokers.get(r.broker_id)
    if reg is None:
        ctl.reply(token, BrokerHeartbeatResponse(ErrorCode.BROKER_ID_NOT_REGISTERED))
        return
    if reg.epoch != r.broker_epoch:
        ctl.reply(token, BrokerHeartbeatResponse(ErrorCode.STALE_BROKER_EPOCH))
        return
    ctl.touch(r.broker_id)
    b = r.broker_id
    caught_up = r.current_metadata_offset >= reg.epoch
    if reg.fenced:
        if r.want_shut_down:  # SHUTDOWN_NOW: nothing to hand over, already fenced
            ctl.reply(token, BrokerHeartbeatResponse(ErrorCode.NONE, caught_up, True, True))
        elif not r.want_fence and caught_up:
            ctl.append([UnfenceBrokerRecord(b, reg.epoch)]
                       + partitions_led_again(ctl, b), "heartbeat: caught up")
            _report(ctl, b, r.current_metadata_offset)
            ctl.reply(token, BrokerHeartbeatResponse(ErrorCode.NONE, True, False, False))
        else:
            ctl.reply(token, BrokerHeartbeatResponse(ErrorCode.NONE, caught_up, True, False))
        return
    if b in ctl.shutdown_offsets:  # CONTROLLED_SHUTDOWN: whatever the heartbeat asks
        if ctl.shutdown_offsets[b] <= lowest_active_offset(ctl) and \
                not leads_anything(ctl, b):  # the cheap test first: this scans every partition
            _shut_down_now(ctl, token, b, caught_up, "heartbeat: controlled shutdown done")
        else:
            ctl.reply(token, BrokerHeartbeatResponse(ErrorCode.NONE, caught_up, False, False))
        return
    if r.want_shut_down:
        if r.want_fence or not leads_anything(ctl, b):
            _shut_down_now(ctl, token, b, caught_up, "heartbeat: immediate shutdown")
        else:
            _enter_controlled_shutdown(ctl, b, reg.epoch, reg.in_controlled_shutdown)
            ctl.reply(token, BrokerHeartbeatResponse(ErrorCode.NONE, caught_up, False, False))
        return
    if r.want_fence:
        fence(ctl, b, "heartbeat: wants to be fenced")
        ctl.reply(token, BrokerHeartbeatResponse(ErrorCode.NONE, caught_up, True, False))
        return
    _report(ctl, b, r.current_metadata_offset)
    ctl.reply(token, BrokerHeartbeatResponse(ErrorCode.NONE, caught_up, False, False))


def _enter_controlled_shutdown(ctl: QuorumController, broker: int, epoch: int,
                               marked: bool) -> None:
    """Step 1: its leaderships and ISR places move, it is marked in controlled shutdown (unless
    the image says so already: a new active controller starts without the soft state), and the
    batch's last offset is the one the other active brokers must reach."""
    records = partitions_without(ctl, broker)
    if not marked:
        records.append(BrokerRegistrationChangeRecord(broker, epoch, FENCE_CHANGE_NONE, 1))
    ctl.append(records, "heartbeat: controlled shutdown")
    ctl.shutdown_offsets[broker] = ctl.next_offset - 1
    ctl.reported.pop(broker, None)


def _shut_down_now(ctl: QuorumController, token: Hashable, broker: int, caught_up: bool,
                   reason: str) -> None:
    """SHUTDOWN_NOW: fenced (out of every ISR), answered ``should_shut_down`` once that is
    committed."""
    fence(ctl, broker, reason)
    ctl.reply(token, BrokerHeartbeatResponse(ErrorCode.NONE, caught_up, True, True))


def lowest_active_offset(ctl: QuorumController) -> float:
    """The lowest metadata offset the active brokers (registered, unfenced, not in controlled
    shutdown here) reported, -1 for one whose report is not kept; infinite with none."""
    offsets = [ctl.reported.get(b, -1) for b, reg in ctl.image.brokers.items()
               if not reg.fenced and b not in ctl.shutdown_offsets]
    return min(offsets, default=float("inf"))


def _report(ctl: QuorumController, broker: int, offset: int) -> None:
    """An active broker's reported metadata offset, kept only if a shutdown waiting may count
    on it."""
    if ctl.shutdown_offsets and offset >= min(ctl.shutdown_offsets.values()):
        ctl.reported[broker] = offset
    else:
        ctl.reported.pop(broker, None)


def _forget(ctl: QuorumController, broker: int) -> None:
    """``broker`` is fenced, unregistered or registered anew: no controlled shutdown of it goes
    on, no offset of it counts; reports no shutdown still waiting can use are dropped."""
    ctl.shutdown_offsets.pop(broker, None)
    ctl.reported.pop(broker, None)
    low = min(ctl.shutdown_offsets.values(), default=None)
    for b in [b for b, o in ctl.reported.items() if low is None or o < low]:
        del ctl.reported[b]


def fence(ctl: QuorumController, broker: int, reason: str) -> None:
    reg = ctl.image.brokers[broker]
    ctl.append(partitions_without(ctl, broker) + [FenceBrokerRecord(broker, reg.epoch)], reason)
    _forget(ctl, broker)


def unregister(ctl: QuorumController, token: Hashable, r: UnregisterBrokerRequest) -> None:
    reg = ctl.image.brokers.get(r.broker_id)
    if reg is not None:
        records = [] if reg.fenced else partitions_without(ctl, r.broker_id)
        ctl.append(records + [UnregisterBrokerRecord(r.broker_id, reg.epoch)], "unregister")
        ctl.leases.pop(r.broker_id, None)
        _forget(ctl, r.broker_id)
    ctl.reply(token, UnregisterBrokerResponse(ErrorCode.NONE))


def expire_leases(ctl: QuorumController) -> None:
    for b in sorted(ctl.leases):
        reg = ctl.image.brokers.get(b)
        if reg is not None and not reg.fenced and ctl.leases[b] <= ctl.now_ms:
            fence(ctl, b, "lease expired")
