"""Partition leadership and ISR: well-formed states and a single committer."""

from __future__ import annotations

from collections.abc import Iterator

from invariants.registry import STATE, invariant
from invariants.view import FOLLOWER, LEADER, NO_LEADER, GlobalView

TopicPartition = tuple[str, int]


def _tp(tp: TopicPartition) -> str:
    return f"{tp[0]}-{tp[1]}"


def a_partition_has_a_leader(view: GlobalView) -> bool:
    """A partition state names a leader, or a running broker leads a replica."""
    if view.zk is not None and any(st.leader != NO_LEADER for _, st in view.zk.partitions):
        return True
    return any(r.role == LEADER and not r.fenced for b in view.brokers or () if b.up
               for _, r in b.replicas)


def partition_states_exist(view: GlobalView) -> bool:
    """ZooKeeper holds a partition state."""
    return view.zk is not None and bool(view.zk.partitions)


def two_brokers_lead_one_partition(view: GlobalView) -> bool:
    """Two or more serving brokers lead the same partition (unfenced): the window of seed
    001 §3."""
    leaders: set[TopicPartition] = set()
    for b in view.brokers or ():
        if not b.serving:
            continue
        for tp, r in b.replicas:
            if r.role == LEADER and not r.fenced:
                if tp in leaders:
                    return True
                leaders.add(tp)
    return False


def unclean_leader_election_enabled(view: GlobalView) -> bool:
    """Unclean leader election is enabled: an out-of-ISR leader committing alone beside a
    paused old leader is the data loss that setting accepts."""
    return view.unclean_leader_election


@invariant(STATE, "seed 001 A/B (leader chosen from the ISR); Kafka's partition state znode",
           premise=a_partition_has_a_leader)
def leader_in_isr(view: GlobalView) -> Iterator[str]:
    """A partition's leader (when it has one: not -1) is a member of its ISR -- in the
    ZooKeeper state, and in the ISR view of every broker that acts as its leader.

    Only an in-sync replica has every committed record; a leader outside the ISR would serve
    (and let followers truncate to) a log that may miss committed data. With unclean leader
    election the new ISR is the new leader alone, so this still holds.
    """
    if view.zk is not None:
        for tp, st in view.zk.partitions:
            if st.leader != NO_LEADER and st.leader not in st.isr:
                yield f"{_tp(tp)}: leader {st.leader} not in ISR {list(st.isr)} in ZooKeeper"
    for b in view.brokers or ():
        if not b.up:
            continue
        for tp, r in b.replicas:
            if r.role == LEADER and not r.fenced and b.broker_id not in r.isr:
                yield f"{_tp(tp)}: broker {b.broker_id} leads with ISR view {list(r.isr)}"


@invariant(STATE, "seed 001 (AR/ISR definitions, F reassignment)",
           premise=partition_states_exist)
def isr_within_assigned_replicas(view: GlobalView) -> Iterator[str]:
    """Every ISR member of a partition (ZooKeeper state) is one of its assigned replicas (the
    topic znode; during a reassignment the union of old and target replicas), and no broker
    appears twice in an ISR.

    The ISR is the set of replicas that may become leader without losing data; a broker that
    holds no replica cannot be in sync, and electing it would lose everything.
    """
    zk = view.zk
    if zk is None:
        return
    for tp, st in zk.partitions:
        if len(set(st.isr)) != len(st.isr):
            yield f"{_tp(tp)}: ISR {list(st.isr)} names a broker twice"
        replicas = zk.assignment.get(tp)
        if replicas is None:
            continue
        outside = [b for b in st.isr if b not in replicas]
        if outside:
            yield (f"{_tp(tp)}: ISR {list(st.isr)} has {outside} outside the assigned "
                   f"replicas {list(replicas)}")


@invariant(STATE, "Kafka's layout: 'the last in-sync replica is never removed from the ISR'",
           premise=partition_states_exist)
def isr_never_empty(view: GlobalView) -> Iterator[str]:
    """A partition state in ZooKeeper always has a non-empty ISR.

    When the last in-sync replica dies the leader becomes -1 and the ISR *keeps* that
    replica: it records who has the committed data, so that (with unclean election off)
    the partition comes back only on that replica. An empty ISR forgets it.
    """
    if view.zk is None:
        return
    for tp, st in view.zk.partitions:
        if not st.isr:
            yield f"{_tp(tp)}: empty ISR (leader {st.leader}, epoch {st.leader_epoch})"


def committers(view: GlobalView, tp: TopicPartition) -> list[int]:
    """Brokers that can commit a record of ``tp`` now (see ``at_most_one_committer``)."""
    out = []
    for b in view.brokers or ():
        if not b.serving:
            continue
        r = b.replica(tp)
        if r is None or r.role != LEADER or r.fenced:
            continue
        ok = True
        for m in r.isr:
            if m == b.broker_id:
                continue
            f = view.broker(m)
            fr = f.replica(tp) if f is not None and f.up else None
            if fr is None or fr.role != FOLLOWER or fr.leader != b.broker_id \
                    or fr.leader_epoch != r.leader_epoch:
                ok = False
                break
        if ok:
            out.append(b.broker_id)
    return out


@invariant(STATE, "seed 001 §3 'Dealing with multiple leaders in transition'",
           premise=two_brokers_lead_one_partition, waived_when=unclean_leader_election_enabled)
def at_most_one_committer(view: GlobalView) -> Iterator[str]:
    """At most one broker per partition can commit.

    Several brokers may *believe* they lead a partition at once (seed 001 §3: the old
    leader A wakes from a GC pause after the controller elected B). That is harmless as
    long as only one of them can *commit*: a record is committed when every member of the
    leader's ISR has it, so a broker B can commit on ``tp`` exactly when

    * its process is up and serving (RUNNING or PENDING_CONTROLLED_SHUTDOWN),
    * its replica of ``tp`` is LEADER and not fenced (no own ISR write has failed since it
      was told to lead), and
    * every *other* member of its own ISR view is up and holds a FOLLOWER replica of ``tp``
      whose leader is B **at B's leader epoch** (it fetches from this leadership).

    Decision. The predicate uses the followers alone, and deliberately *not* "the leader's
    view matches ZooKeeper's current state/version". The seed's argument is exactly that:
    the stale leader A still believes in ISR {A,B,C}, but B stopped fetching from A on
    becoming leader, so A cannot commit without shrinking its ISR, and the shrink is a
    conditional write on a version the controller has already moved (A is then fenced).
    The broker-core caveat -- the new leader B may shrink its ISR to {B} before the last
    follower C switches away from A -- is covered: B then commits alone, while A still
    cannot, because B (in A's ISR view) leads at a higher epoch and never follows A's old
    epoch again. Requiring a ZooKeeper match would hide real split brains (e.g. a leader
    whose unconditional ISR write overwrote the controller's state would "match" while the
    rightful leader would not). Followers whose view is unknown count as not following.

    With unclean leader election enabled the invariant is waived: an out-of-ISR leader
    committing alone beside a paused old leader whose ISR is only itself is the data loss
    that setting knowingly accepts. The checker still evaluates it there and reports how
    often it would have failed (``kcontrol check --coverage``).
    """
    if not view.brokers:
        return
    tps = set(view.partitions_on_brokers)
    for tp in sorted(tps):
        c = committers(view, tp)
        if len(c) > 1:
            yield f"{_tp(tp)}: brokers {c} can all commit"
