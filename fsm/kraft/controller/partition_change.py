"""Every change the quorum controller makes to a partition is built here, as one
``PartitionChangeRecord`` carrying only what changed.

The rules, in one place:

* **Leader epoch** (KAFKA-15021): the record carries a leader only when the leader changes, so
  replay bumps the leader epoch only then; an ISR-only change bumps the partition epoch alone.
* **Elections** pick the first replica, in replica order, that is in the ISR and usable
  (registered, unfenced, not in controlled shutdown). An unclean election (``ElectLeaders``
  with ``UNCLEAN`` only) may pick a usable replica outside the ISR; the ISR becomes that one.
* **Last replica standing**: removing a broker never empties the ISR; if it was the only
  member, it stays and the partition has no leader, so its return can elect it cleanly.
* **Reassignment** (seed 004): while one runs, ``replicas`` is the target followed by the
  replicas being removed (Kafka's order, which keeps the target's preferred order), with
  ``adding_replicas`` and ``removing_replicas`` set. It completes when every target replica
  is in the ISR (Kafka's rule; seed 004's "an alterIsr which adds both broker 4 and 5"):
  replicas become the target, the ISR is pruned to it, and a leader being removed hands over
  to the first target replica in the ISR. A cancel that would empty the ISR is refused.
"""

from __future__ import annotations

from collections.abc import Callable

from fsm.kraft.image.partitions import PartitionImage
from fsm.kraft.records.uuid import Uuid
from fsm.kraft.records.values import (
    LEADER_UNCHANGED,
    NO_LEADER,
    PartitionChangeRecord,
    Replicas,
)

Usable = Callable[[int], bool]


def elect(replicas: Replicas, isr: Replicas, usable: Usable) -> int:
    for r in replicas:
        if r in isr and usable(r):
            return r
    return NO_LEADER


def change(topic_id: Uuid, partition_id: int, p: PartitionImage, *,
           isr: Replicas | None = None, leader: int | None = None,
           replicas: Replicas | None = None, adding: Replicas | None = None,
           removing: Replicas | None = None) -> PartitionChangeRecord | None:
    """The record taking ``p`` to the given values (None: keep), or None if nothing changes."""
    new_isr = None if isr is None or isr == p.isr else isr
    new_leader = LEADER_UNCHANGED if leader is None or leader == p.leader else leader
    new_replicas = None if replicas is None or replicas == p.replicas else replicas
    new_adding = None if adding is None or adding == p.adding_replicas else adding
    new_removing = None if removing is None or removing == p.removing_replicas else removing
    if (new_isr is None and new_leader == LEADER_UNCHANGED and new_replicas is None
            and new_adding is None and new_removing is None):
        return None
    return PartitionChangeRecord(partition_id, topic_id, new_isr, new_leader, new_replicas,
                                 new_removing, new_adding)


def target_isr(p: PartitionImage, requested: Replicas, usable: Usable
               ) -> tuple[Replicas, int, Replicas | None]:
    """(isr, leader, replicas or None) after the ISR becomes ``requested``: completes a
    reassignment whose adding replicas are all in it (seed 004: the controller may answer an
    ISR other than the one asked for)."""
    target = p.target_replicas()
    if p.reassigning and all(r in requested for r in target):
        isr = tuple(r for r in requested if r in target)
        leader = p.leader if p.leader in target and usable(p.leader) else elect(target, isr, usable)
        return isr, leader, target
    return requested, p.leader, None


def without_broker(topic_id: Uuid, partition_id: int, p: PartitionImage, broker: int,
                   usable: Usable) -> PartitionChangeRecord | None:
    """``broker`` is leaving (fenced, shutting down, unregistered, re-registered): out of the
    ISR (unless it is the last one standing) and out of the leadership."""
    if broker not in p.isr and p.leader != broker:
        return None
    isr = tuple(r for r in p.isr if r != broker) or p.isr
    leader = p.leader
    if leader in (broker, NO_LEADER):
        leader = elect(p.replicas, tuple(r for r in isr if r != broker), usable)
    return change(topic_id, partition_id, p, isr=isr, leader=leader)


def with_broker_back(topic_id: Uuid, partition_id: int, p: PartitionImage,
                     usable: Usable) -> PartitionChangeRecord | None:
    """A leaderless partition gets a leader from its ISR if one became usable."""
    if p.leader != NO_LEADER:
        return None
    leader = elect(p.replicas, p.isr, usable)
    return None if leader == NO_LEADER else change(topic_id, partition_id, p, leader=leader)


class EmptyIsr(ValueError):
    """The change would leave the partition without an in-sync replica."""


def reassign(topic_id: Uuid, partition_id: int, p: PartitionImage, target: Replicas,
             usable: Usable) -> PartitionChangeRecord | None:
    """Start (or finish at once) a reassignment of ``p`` to ``target``. A reassignment
    already running is replaced, counted from its original replicas."""
    original = tuple(r for r in p.replicas if r not in p.adding_replicas)
    isr = p.isr
    if set(target) <= set(original) and any(r in isr for r in target):
        new_isr = tuple(r for r in isr if r in target)
        leader = p.leader if p.leader in target and usable(p.leader) else elect(target, new_isr,
                                                                                  usable)
        return change(topic_id, partition_id, p, replicas=target, isr=new_isr, leader=leader,
                      adding=(), removing=())
    adding = tuple(r for r in target if r not in original)
    removing = tuple(r for r in original if r not in target)
    merged = target + removing
    if all(r in isr for r in target):  # every target replica is in sync already
        new_isr = tuple(r for r in isr if r in target)
        leader = p.leader if p.leader in target and usable(p.leader) else elect(target, new_isr,
                                                                                  usable)
        return change(topic_id, partition_id, p, replicas=target, isr=new_isr, leader=leader,
                      adding=(), removing=())
    kept = tuple(r for r in isr if r in merged)  # a replaced reassignment's adds may go
    if not kept:
        raise EmptyIsr(f"moving to {list(target)} would leave the ISR empty")
    leader = p.leader if p.leader in kept else elect(merged, kept, usable)
    return change(topic_id, partition_id, p, replicas=merged, isr=kept, leader=leader,
                  adding=adding, removing=removing)


def cancel(topic_id: Uuid, partition_id: int, p: PartitionImage,
           usable: Usable) -> PartitionChangeRecord | None:
    original = tuple(r for r in p.replicas if r not in p.adding_replicas)
    isr = tuple(r for r in p.isr if r in original)
    if not isr:
        raise EmptyIsr(f"reverting to {list(original)} would leave the ISR empty")
    leader = p.leader if p.leader in original and usable(p.leader) else elect(original, isr,
                                                                              usable)
    return change(topic_id, partition_id, p, replicas=original, isr=isr, leader=leader,
                  adding=(), removing=())
