"""Broker membership: BrokerRegistration, BrokerHeartbeat, UnregisterBroker, and the lease
that fences a broker which stops heartbeating (seed 004, "Broker Registration and State
Management").

* **Registration**: the broker epoch is the offset its ``RegisterBrokerRecord`` takes, so it
  is above every earlier epoch of that id. The same incarnation id again is a retry of a lost
  answer: the same epoch, nothing appended. Another incarnation while the old one still has a
  live session is ``DUPLICATE_BROKER_REGISTRATION``. A new registration is fenced.
* **Heartbeat**: renews the lease. A fenced broker is unfenced once it does not want to be
  fenced and has replayed the metadata up to its own registration record (Kafka's
  caught-up test: ``current_metadata_offset >= broker epoch``). ``want_shut_down`` moves
  every leadership off the broker (and the broker out of every ISR) and only then, when those
  records are committed, answers ``should_shut_down``.
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
    ctl.append(records, "registration")
    ctl.touch(r.broker_id)
    ctl.reply(token, BrokerRegistrationResponse(ErrorCode.NONE, epoch))


def heartbeat(ctl: QuorumController, token: Hashable, r: BrokerHeartbeatRequest) -> None:
    reg = ctl.image.brokers.get(r.broker_id)
    if reg is None:
        ctl.reply(token, BrokerHeartbeatResponse(ErrorCode.BROKER_ID_NOT_REGISTERED))
        return
    if reg.epoch != r.broker_epoch:
        ctl.reply(token, BrokerHeartbeatResponse(ErrorCode.STALE_BROKER_EPOCH))
        return
    ctl.touch(r.broker_id)
    caught_up = r.current_metadata_offset >= reg.epoch
    if reg.fenced:
        if r.want_shut_down:  # nothing to hand over: shut down now, still fenced
            ctl.reply(token, BrokerHeartbeatResponse(ErrorCode.NONE, caught_up, True, True))
        elif not r.want_fence and caught_up:
            ctl.append([UnfenceBrokerRecord(r.broker_id, reg.epoch)]
                       + partitions_led_again(ctl, r.broker_id), "heartbeat: caught up")
            ctl.reply(token, BrokerHeartbeatResponse(ErrorCode.NONE, True, False, False))
        else:
            ctl.reply(token, BrokerHeartbeatResponse(ErrorCode.NONE, caught_up, True, False))
        return
    if r.want_shut_down:
        records = partitions_without(ctl, r.broker_id)
        if not reg.in_controlled_shutdown:
            records.append(BrokerRegistrationChangeRecord(r.broker_id, reg.epoch,
                                                          FENCE_CHANGE_NONE, 1))
        ctl.append(records, "heartbeat: controlled shutdown")
        ctl.reply(token, BrokerHeartbeatResponse(ErrorCode.NONE, caught_up, False,
                                                 not leads_anything(ctl, r.broker_id)))
        return
    if r.want_fence:
        fence(ctl, r.broker_id, "heartbeat: wants to be fenced")
        ctl.reply(token, BrokerHeartbeatResponse(ErrorCode.NONE, caught_up, True, False))
        return
    ctl.reply(token, BrokerHeartbeatResponse(ErrorCode.NONE, caught_up, False, False))


def fence(ctl: QuorumController, broker: int, reason: str) -> None:
    reg = ctl.image.brokers[broker]
    ctl.append(partitions_without(ctl, broker) + [FenceBrokerRecord(broker, reg.epoch)], reason)


def unregister(ctl: QuorumController, token: Hashable, r: UnregisterBrokerRequest) -> None:
    reg = ctl.image.brokers.get(r.broker_id)
    if reg is not None:
        records = [] if reg.fenced else partitions_without(ctl, r.broker_id)
        ctl.append(records + [UnregisterBrokerRecord(r.broker_id, reg.epoch)], "unregister")
        ctl.leases.pop(r.broker_id, None)
    ctl.reply(token, UnregisterBrokerResponse(ErrorCode.NONE))


def expire_leases(ctl: QuorumController) -> None:
    for b in sorted(ctl.leases):
        reg = ctl.image.brokers.get(b)
        if reg is not None and not reg.fenced and ctl.leases[b] <= ctl.now_ms:
            fence(ctl, b, "lease expired")
