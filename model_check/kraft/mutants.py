"""KRaft mutants: patches from outside ``fsm/`` that reopen KRaft's history (issue 23 item 8),
each with the shipped KRaft scenario that finds it. Same machinery as the ZooKeeper-mode
catalogue (``model_check.mutants``): the core carries no flag, leaving the block restores it.

    kcontrol check kraft-smoke --mutant kraft-uncommitted-visible
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import replace
from typing import Any

from model_check import mutants
from model_check.mutants import Mutant, UnknownMutant, _Patches


def _isr_change_bumps_leader_epoch(p: _Patches) -> None:
    """KAFKA-15021: an ISR-only change carries the (unchanged) leader, so replay bumps the
    leader epoch and the followers' fetches at the old epoch fail."""
    from fsm.kraft.controller import partition_change as pc

    original = pc.change

    def change(topic_id: bytes, partition_id: int, p: Any, **kw: Any) -> Any:
        rec = original(topic_id, partition_id, p, **kw)
        if rec is not None and rec.isr is not None and rec.leader == -2 and p.leader != -1:
            rec = replace(rec, leader=p.leader)
        return rec

    p.setattr(pc, "change", change)


def _stale_alter_partition_accepted(p: _Patches) -> None:
    """AlterIsr as before its epochs were checked: a stale leader or partition epoch is taken
    for current, and (as before KIP-841's INELIGIBLE_REPLICA) the ISR asked for is taken as
    is -- so a leader's old view of the ISR overwrites the controller's newer one, bringing
    back a broker the controller fenced out of it. With the epoch check alone (the clean
    core without its eligibility check) the stale request is refused."""
    from fsm.kraft.controller import partitions

    original = partitions._alter_one

    def alter_one(ctl: Any, broker: int, item: Any) -> Any:
        part = ctl.image.partition(item.topic_id, item.partition_id)
        if part is None or part.leader != broker:
            return original(ctl, broker, item)
        item = replace(item, leader_epoch=part.leader_epoch,
                       partition_epoch=part.partition_epoch)
        usable = ctl.usable
        try:
            ctl.usable = lambda b: b in item.new_isr or usable(b)
            return original(ctl, broker, item)
        finally:
            del ctl.usable

    p.setattr(partitions, "_alter_one", alter_one)


def _uncommitted_visible(p: _Patches) -> None:
    """Answers leave before their records are committed (seed 004: the future state must
    not be visible)."""
    from fsm.kraft.controller.events import Reply
    from fsm.kraft.controller.quorum_controller import QuorumController

    def reply(self: Any, token: Any, response: Any) -> None:
        self._out.append(Reply(token, response))

    p.setattr(QuorumController, "reply", reply)


def _unfenced_before_caught_up(p: _Patches) -> None:
    """The controller unfences a broker without looking at its metadata offset."""
    from fsm.kraft.controller import brokers
    from fsm.kraft.controller.handlers import HANDLERS
    from fsm.kraft.controller.requests import BrokerHeartbeatRequest

    def heartbeat(ctl: Any, token: Any, r: Any) -> None:
        reg = ctl.image.brokers.get(r.broker_id)
        if reg is not None:
            r = replace(r, current_metadata_offset=max(r.current_metadata_offset, reg.epoch))
        brokers.heartbeat(ctl, token, r)

    p.setitem(HANDLERS, BrokerHeartbeatRequest, heartbeat)


def _retried_registration_new_epoch(p: _Patches) -> None:
    """A retried registration (same incarnation id) is given a new epoch instead of the one
    it was given before."""
    from fsm.errors import ErrorCode
    from fsm.kraft.controller import brokers
    from fsm.kraft.controller.handlers import HANDLERS
    from fsm.kraft.controller.requests import BrokerRegistrationRequest, BrokerRegistrationResponse
    from fsm.kraft.records.values import RegisterBrokerRecord

    def register(ctl: Any, token: Any, r: Any) -> None:
        old = ctl.image.brokers.get(r.broker_id)
        if old is None or old.incarnation_id != r.incarnation_id:
            brokers.register(ctl, token, r)
            return
        epoch = ctl.next_offset
        ctl.append([RegisterBrokerRecord(r.broker_id, r.incarnation_id, epoch, r.listeners,
                                         r.features, r.rack)], "registration retried")
        ctl.touch(r.broker_id)
        ctl.reply(token, BrokerRegistrationResponse(ErrorCode.NONE, epoch))

    p.setitem(HANDLERS, BrokerRegistrationRequest, register)


KRAFT_MUTANTS: tuple[Mutant, ...] = (
    Mutant("kraft-isr-change-bumps-leader-epoch",
           "an ISR-only PartitionChangeRecord carries the leader, bumping the leader epoch",
           "KAFKA-15021", "kraft-smoke", 5, _isr_change_bumps_leader_epoch),
    Mutant("kraft-stale-alter-partition-accepted",
           "AlterPartition is not checked against the leader and partition epochs",
           "seed 004 AlterIsr; KIP-497", "kraft-isr", 10, _stale_alter_partition_accepted),
    Mutant("kraft-uncommitted-visible",
           "answers are sent before their records are committed",
           "seed 004 'Persistence and Visibility'", "kraft-smoke", 6, _uncommitted_visible),
    Mutant("kraft-unfenced-before-caught-up",
           "a broker is unfenced without having replayed its own registration",
           "seed 004 'Broker Leases'", "kraft-startup", 9, _unfenced_before_caught_up),
    Mutant("kraft-retried-registration-new-epoch",
           "a retried registration of the same incarnation gets a new epoch",
           "seed 004 'Broker Registration'", "kraft-startup", 7,
           _retried_registration_new_epoch),
)


def get(name: str) -> Mutant:
    for m in KRAFT_MUTANTS:
        if m.name == name:
            return m
    raise UnknownMutant(f"no KRaft mutant {name!r} (have: {[m.name for m in KRAFT_MUTANTS]})")


def patched(name: str | None) -> AbstractContextManager[Mutant | None]:
    """Apply KRaft mutant ``name`` for the block (None: the clean core)."""
    return mutants.patched(name, get)
