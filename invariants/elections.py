"""Leader elections: who may become a partition's leader, and when a replica outside the
ISR may (unclean leader election, the last resort)."""

from __future__ import annotations

from collections.abc import Iterator

from invariants.registry import QUIESCENT, TRANSITION, invariant
from invariants.view import NO_LEADER, ControllerView, GlobalView, PartitionStateView

TopicPartition = tuple[str, int]


def _tp(tp: TopicPartition) -> str:
    return f"{tp[0]}-{tp[1]}"


def deciding_controller(before: GlobalView, st: PartitionStateView) -> ControllerView | None:
    """The controller that wrote ``st`` in the step after ``before``: the running, active
    candidate whose epoch the state carries (None: not visible, or nobody). Only it can
    commit a write fenced with that epoch (``partition_state_decided_by_current_controller``),
    and a controller awaiting its write handles no other event: its ``live`` and
    ``shutting_down`` in ``before`` are the ones it decided with."""
    for c in before.controllers or ():
        if c.up and c.active and c.epoch == st.controller_epoch:
            return c
    return None


def _elected(before: GlobalView, after: GlobalView
             ) -> Iterator[tuple[TopicPartition, PartitionStateView, PartitionStateView | None]]:
    """``(tp, new state, previous state or None)`` of every partition whose state znode the
    step created with a leader, or whose leader it changed to a broker (not -1)."""
    zb, za = before.zk, after.zk
    if zb is None or za is None or zb is za:
        return
    states = zb.states
    for tp, st in za.partitions:
        if st.leader == NO_LEADER:
            continue
        old = states.get(tp)
        if old is not None and old.czxid != st.czxid:
            old = None  # a new incarnation of the partition (topic deleted and created again)
        elif old is not None and old.leader == st.leader:
            continue
        yield tp, st, old


def a_leader_elected(before: GlobalView, after: GlobalView) -> bool:
    """The step gave a partition a new leader (not -1) in ZooKeeper."""
    return any(True for _ in _elected(before, after))


def an_unclean_election(before: GlobalView, after: GlobalView) -> bool:
    """The step changed a partition's leader to a broker outside its previous ISR."""
    return any(old is not None and st.leader not in old.isr
               for _, st, old in _elected(before, after))


def unclean_and_a_partition_offline(view: GlobalView) -> bool:
    """Unclean leader election is enabled and a partition (of a topic not being deleted) has
    no leader."""
    zk = view.zk
    return view.unclean_leader_election and zk is not None and any(
        st.leader == NO_LEADER and tp[0] not in zk.deleting for tp, st in zk.partitions)


@invariant(TRANSITION, "seed 001 A 3.2 and B 1.1 (a leader is one of the live brokers in AR); "
                       "seed 000 'leader selectors'", premise=a_leader_elected)
def new_leader_is_live_assigned_replica(before: GlobalView, after: GlobalView
                                        ) -> Iterator[str]:
    """A step that gives a partition a new leader in ZooKeeper (creates its state with a
    leader, or changes the leader to a broker other than -1) names one of the partition's
    assigned replicas (the topic znode), which the controller that decided it counted as
    live and not shutting down.

    Every selector -- a new partition's, the offline one (clean or unclean), the
    controlled-shutdown, preferred and reassignment ones -- picks among the assigned
    replicas that are live and eligible; a broker holding no replica has no data at all,
    and a leader the controller did not know live (or knew to be leaving) is an election
    that makes the partition unavailable at once. This is the one guarantee unclean leader
    election keeps about *who* leads: the leader is a live assigned replica, not
    necessarily an in-sync one.

    "Live" is judged by the deciding controller's own view (``ControllerView.live``), not by
    ZooKeeper at commit time: a broker may die between the decision and the commit, which
    the controller repairs on its next ``BrokerChange`` (``leader_is_registered_or_none``
    judges the outcome once quiescent). The deciding controller is the active one whose
    epoch the state carries; when it is not visible (a live audit) only "assigned" is
    checked.
    """
    za = after.zk
    for tp, st, _old in _elected(before, after):
        replicas = za.assignment.get(tp) if za is not None else None
        if replicas is not None and st.leader not in replicas:
            yield (f"{_tp(tp)}: leader {st.leader} (epoch {st.leader_epoch}) is not an "
                   f"assigned replica {list(replicas)}")
        c = deciding_controller(before, st)
        if c is None or c.live is None:
            continue
        if st.leader not in c.live:
            yield (f"{_tp(tp)}: leader {st.leader} (epoch {st.leader_epoch}) elected by "
                   f"controller {c.broker_id}, which holds live only {list(c.live)}")
        elif st.leader in c.shutting_down:
            yield (f"{_tp(tp)}: leader {st.leader} (epoch {st.leader_epoch}) elected by "
                   f"controller {c.broker_id} while it is shutting down")


@invariant(TRANSITION, "seed 001 A 3.2 ('otherwise select one of the live brokers in AR ... "
                       "potential data loss'); Kafka's unclean.leader.election.enable",
           premise=an_unclean_election)
def unclean_election_only_as_last_resort(before: GlobalView, after: GlobalView
                                         ) -> Iterator[str]:
    """A step that changes a partition's leader in ZooKeeper (same znode) to a broker
    outside the previous ISR -- an unclean election -- happens only when the cluster
    allows unclean leader election, only when the deciding controller held no member of
    the previous ISR live and eligible (the last resort), and makes the new ISR that leader
    alone.

    The ISR is the set of replicas known to hold every committed record; electing outside
    it loses whatever the new leader had not replicated. Kafka takes that loss only when
    ``unclean.leader.election.enable`` is set and only when no in-sync replica can lead --
    a clean election whenever one exists is what keeps the loss to the unavoidable cases.
    The new ISR must then be the new leader alone: the old members hold records the new
    leader lacks, so they are not in sync with it (they truncate and catch up first), and
    an ISR naming them would let a later clean election go back to a diverged log.

    The eligible ISR members are judged by the deciding controller's view (live, not
    shutting down), as in ``new_leader_is_live_assigned_replica``; without it (a live
    audit) only the setting and the new ISR are checked.
    """
    for tp, st, old in _elected(before, after):
        if old is None or st.leader in old.isr:
            continue
        what = (f"{_tp(tp)}: leader {old.leader} -> {st.leader} (epoch {st.leader_epoch}) "
                f"outside the previous ISR {list(old.isr)}")
        if not after.unclean_leader_election:
            yield f"{what} with unclean leader election disabled"
            continue
        if tuple(st.isr) != (st.leader,):
            yield f"{what}, new ISR {list(st.isr)} is not the new leader alone"
        c = deciding_controller(before, st)
        if c is None or c.live is None:
            continue
        eligible = [m for m in old.isr if m in c.live and m not in c.shutting_down]
        if eligible:
            yield (f"{what} while controller {c.broker_id} held ISR members {eligible} "
                   f"live and eligible")


@invariant(QUIESCENT, "seed 001 A 3.2 and seed 000 'broker join' (unclean leader election "
                      "enabled)", premise=unclean_and_a_partition_offline)
def no_offline_partition_with_live_replica_when_unclean(view: GlobalView) -> Iterator[str]:
    """With unclean leader election enabled, once quiescent, no partition is offline
    (leader -1) while one of its assigned replicas is registered (live). Topics pending
    deletion aside.

    The availability half of the unclean bargain: the setting accepts losing records so
    that a partition whose whole ISR is gone comes back on any live replica instead of
    waiting for an in-sync one. A partition left offline beside a live assigned replica
    pays the price (the setting is on) without the benefit. Clean election's weaker
    promise, ``no_offline_partition_with_live_isr_replica``, holds either way.
    """
    zk = view.zk
    if zk is None or view.pending or not view.unclean_leader_election:
        return
    for tp, st in zk.partitions:
        if tp[0] in zk.deleting or st.leader != NO_LEADER:
            continue
        live = [m for m in zk.assignment.get(tp, ()) if m in zk.registered]
        if live:
            yield f"{_tp(tp)}: offline (leader -1) with live assigned replicas {live}"
