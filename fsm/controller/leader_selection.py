"""Leader selection as pure functions (seed 000's four selectors) and the per-partition
decision the controller writes.

``alive``: registered brokers (including those shutting down); ``eligible``: brokers that
may become leader (alive and not shutting down). Replica lists are in assignment order;
the first replica is the preferred one. None means "no leader can be chosen".
"""

from __future__ import annotations

from collections.abc import Collection

from fsm.controller.records import (
    INIT,
    OFFLINE,
    PREFERRED,
    REASSIGN_DONE,
    REASSIGN_EPOCH,
    SHUTDOWN,
)
from fsm.values import NO_LEADER, LeaderAndIsr

Isr = tuple[int, ...]


def shrink_isr(isr: Isr, remove: Collection[int]) -> Isr:
    """``isr`` without ``remove``; the last ISR member is never removed (unchanged instead)."""
    new = tuple(i for i in isr if i not in remove)
    return new if new else isr


def init_leader(assigned: Isr, alive: Collection[int],
                eligible: Collection[int]) -> tuple[int, Isr] | None:
    """New partition: leader = first eligible replica, ISR = the live replicas."""
    live = tuple(r for r in assigned if r in alive)
    for r in live:
        if r in eligible:
            return r, live
    return None


def offline_leader(assigned: Isr, isr: Isr, alive: Collection[int], eligible: Collection[int],
                   unclean: bool) -> tuple[int, Isr] | None:
    """OfflinePartitionLeaderSelector: the first assigned replica in the live ISR; ISR = live
    ISR. With ``unclean``: else the first eligible assigned replica, ISR = [it]."""
    live_isr = tuple(i for i in isr if i in alive)
    for r in assigned:
        if r in eligible and r in live_isr:
            return r, live_isr
    if unclean:
        for r in assigned:
            if r in eligible:
                return r, (r,)
    return None


def reassigned_leader(target: Isr, isr: Isr, eligible: Collection[int]) -> int | None:
    """ReassignedPartitionLeaderSelector: the first target replica that is in the ISR."""
    for r in target:
        if r in isr and r in eligible:
            return r
    return None


def preferred_leader(assigned: Isr, isr: Isr, eligible: Collection[int]) -> int | None:
    """PreferredReplicaPartitionLeaderSelector: the first replica, when live and in sync."""
    if assigned and assigned[0] in isr and assigned[0] in eligible:
        return assigned[0]
    return None


def controlled_shutdown_leader(assigned: Isr, isr: Isr, eligible: Collection[int],
                               shutting: Collection[int]) -> tuple[int, Isr] | None:
    """ControlledShutdownLeaderSelector: a live ISR replica not shutting down; ISR without
    the shutting-down brokers."""
    new_isr = tuple(i for i in isr if i not in shutting)
    for r in assigned:
        if r in new_isr and r in eligible:
            return r, new_isr
    return None


def decide(kind: str, arg: int, assigned: Isr, cur: LeaderAndIsr, alive: Collection[int],
           eligible: Collection[int], unclean: bool, controller_epoch: int,
           target: Isr = ()) -> LeaderAndIsr | None:
    """The new state of one partition for a decision ``kind``, or None when nothing changes
    (or nothing can be decided). Every change bumps the leader epoch (Kafka also bumps it on
    an ISR shrink by the controller)."""
    leader, isr, epoch = cur.leader, cur.isr, cur.leader_epoch
    if kind == INIT:
        chosen = init_leader(assigned, alive, eligible)
        if chosen is None:
            return None
        return LeaderAndIsr(chosen[0], 0, chosen[1], controller_epoch)
    if kind == OFFLINE:
        if leader != NO_LEADER and leader in alive:
            # shrink_isr(isr, dead members): the live members, or isr itself when none is
            new_isr = tuple(filter(alive.__contains__, isr))
            if not new_isr or len(new_isr) == len(isr):
                return None
            return LeaderAndIsr(leader, epoch + 1, new_isr, controller_epoch)
        chosen = offline_leader(assigned, isr, alive, eligible, unclean)
        if chosen is None:
            if leader == NO_LEADER:
                return None
            return LeaderAndIsr(NO_LEADER, epoch + 1, isr, controller_epoch)
        return LeaderAndIsr(chosen[0], epoch + 1, chosen[1], controller_epoch)
    if kind == SHUTDOWN:
        if leader == arg:
            chosen = controlled_shutdown_leader(assigned, isr, eligible, (arg,))
            if chosen is None:
                return None
            return LeaderAndIsr(chosen[0], epoch + 1, chosen[1], controller_epoch)
        new_isr = shrink_isr(isr, (arg,))
        if new_isr == isr:
            return None
        return LeaderAndIsr(leader, epoch + 1, new_isr, controller_epoch)
    if kind == PREFERRED:
        p = preferred_leader(assigned, isr, eligible)
        if p is None or p == leader:
            return None
        return LeaderAndIsr(p, epoch + 1, isr, controller_epoch)
    if kind == REASSIGN_EPOCH:
        return LeaderAndIsr(leader, epoch + 1, isr, controller_epoch)
    if kind == REASSIGN_DONE:
        if not set(target) <= set(isr):
            return None
        new_leader = leader if leader in target and leader in eligible else \
            reassigned_leader(target, isr, eligible)
        if new_leader is None:
            return None
        new_isr = tuple(i for i in isr if i in target)
        return LeaderAndIsr(new_leader, epoch + 1, new_isr, controller_epoch)
    raise AssertionError(f"unknown decision kind {kind!r}")


SELECTORS = ("new-partition", "offline", "offline-unclean", "reassigned", "preferred",
             "controlled-shutdown")
"""The leader selectors, by the name the coverage report uses: seed 000's four
(OfflinePartition -- clean, and unclean when enabled --, ReassignedPartition,
PreferredReplicaPartition, ControlledShutdown) and the new partition's."""

DECISION_KINDS = (INIT, OFFLINE, SHUTDOWN, PREFERRED, REASSIGN_EPOCH, REASSIGN_DONE)


def selector_of(kind: str, before: LeaderAndIsr | None, after: LeaderAndIsr) -> str | None:
    """The selector that chose ``after``'s leader in a committed decision of ``kind`` over
    the state ``before`` (None: a new partition), or None when no selector chose a leader
    (the leader stayed -- an ISR shrink, a leader-epoch bump -- or none could be found)."""
    if kind == INIT:
        return SELECTORS[0]
    if before is None or after.leader == NO_LEADER or after.leader == before.leader:
        return None
    if kind == OFFLINE:
        return "offline" if after.leader in before.isr else "offline-unclean"
    if kind == REASSIGN_DONE:
        return "reassigned"
    if kind == PREFERRED:
        return "preferred"
    if kind == SHUTDOWN:
        return "controlled-shutdown"
    return None
