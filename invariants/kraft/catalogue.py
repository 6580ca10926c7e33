"""The KRaft invariants (issue 23 item 8), over ``KRaftView``; the same registry as the
ZooKeeper-mode catalogue (``invariants.registry``)."""

from __future__ import annotations

from collections.abc import Iterator

from fsm.kraft.image import MetadataImage
from fsm.kraft.records.values import NO_LEADER, RegisterBrokerRecord
from invariants.kraft.view import KRaftView
from invariants.registry import QUIESCENT, STATE, TRANSITION, Invariant, invariant


def _partitions(image: MetadataImage) -> Iterator[tuple[str, bytes, int, object]]:
    for tid, t in image.topics.items():
        for pid, p in t.partitions.items():
            yield t.name, tid, pid, p


def any_partition(view: KRaftView) -> bool:
    """The committed metadata has a partition."""
    return bool(view.committed.topics)


def a_partition_in_both(before: KRaftView, after: KRaftView) -> bool:
    """A partition exists before and after the step."""
    return bool(before.committed.topics) and bool(after.committed.topics)


def two_leading_brokers(view: KRaftView) -> bool:
    """At least two live brokers lead some partition."""
    return sum(1 for b in view.brokers if b.alive and b.leaders) >= 2


def a_registered_broker(view: KRaftView) -> bool:
    """The committed metadata has a registered broker."""
    return bool(view.committed.brokers)


def a_live_registered_broker(view: KRaftView) -> bool:
    """A live broker holds a broker epoch."""
    return any(b.alive and b.epoch is not None for b in view.brokers)


def a_broker_in_both(before: KRaftView, after: KRaftView) -> bool:
    """A broker is registered before and after the step."""
    return bool(set(before.committed.brokers) & set(after.committed.brokers))


def a_fenced_broker(view: KRaftView) -> bool:
    """The committed metadata has a fenced broker and a partition."""
    return any(r.fenced for r in view.committed.brokers.values()) and bool(
        view.committed.topics)


def always(view: KRaftView) -> bool:
    """Always."""
    return True


@invariant(STATE, "KIP-631 fencing; Raft's leader completeness for partitions",
           premise=two_leading_brokers)
def one_leader_per_leader_epoch(view: KRaftView) -> Iterator[str]:
    """At most one live broker acts as the leader of a partition in one leader epoch."""
    seen: dict[tuple[bytes, int, int], int] = {}
    for b in view.brokers:
        if not b.alive:
            continue
        for key in b.leaders:
            other = seen.setdefault(key, b.broker_id)
            if other != b.broker_id:
                yield (f"brokers {other} and {b.broker_id} both lead partition {key[1]} in "
                       f"leader epoch {key[2]}")


@invariant(STATE, "seed 004 PartitionRecord; Kafka's ISR rules", premise=any_partition)
def leader_in_isr_within_replicas(view: KRaftView) -> Iterator[str]:
    """In every controller image and the committed one, a partition's leader is -1 or in
    its ISR, its ISR is non-empty and within its replicas."""
    images = [("committed", view.committed)] + [
        (f"controller {c.index}", c.image) for c in view.controllers if c.active]
    for where, image in images:
        for name, _, pid, p in _partitions(image):
            if p.leader != NO_LEADER and p.leader not in p.isr:
                yield f"{where}: {name}-{pid} leader {p.leader} not in ISR {list(p.isr)}"
            if not p.isr or not set(p.isr) <= set(p.replicas):
                yield f"{where}: {name}-{pid} ISR {list(p.isr)} vs replicas {list(p.replicas)}"


@invariant(STATE, "seed 004 'Broker Leases' (a fenced broker is out of the cluster)",
           premise=any_partition)
def no_fenced_leader(view: KRaftView) -> Iterator[str]:
    """No partition in the committed metadata is led by a fenced or unregistered broker."""
    for name, _, pid, p in _partitions(view.committed):
        if p.leader == NO_LEADER:
            continue
        reg = view.committed.brokers.get(p.leader)
        if reg is None or reg.fenced:
            yield f"{name}-{pid} is led by broker {p.leader}, which is " \
                  f"{'unregistered' if reg is None else 'fenced'}"


@invariant(STATE, "KIP-841 (fenced brokers leave the ISR); 'last replica standing'",
           premise=a_fenced_broker)
def fenced_brokers_out_of_isr(view: KRaftView) -> Iterator[str]:
    """A fenced or unregistered broker is in a committed ISR only as the last replica
    standing: the only member of the ISR of a partition without a leader."""
    for name, _, pid, p in _partitions(view.committed):
        for b in p.isr:
            reg = view.committed.brokers.get(b)
            if (reg is None or reg.fenced) and (p.isr != (b,) or p.leader != NO_LEADER):
                yield f"{name}-{pid}: broker {b} is fenced but in ISR {list(p.isr)} " \
                      f"(leader {p.leader})"


@invariant(STATE, "seed 004 'Persistence and Visibility'", premise=a_live_registered_broker)
def nothing_uncommitted_is_visible(view: KRaftView) -> Iterator[str]:
    """Brokers have replayed only committed offsets, and a live broker's epoch is the offset
    of a committed registration record of its own incarnation."""
    for b in view.brokers:
        if b.offset > view.hw:
            yield f"broker {b.broker_id} replayed offset {b.offset} beyond the committed {view.hw}"
        if not b.alive or b.epoch is None:
            continue
        rec = view.log[b.epoch] if 0 <= b.epoch < len(view.log) else None
        if not (isinstance(rec, RegisterBrokerRecord) and rec.broker_id == b.broker_id
                and rec.incarnation_id == b.incarnation_id):
            yield f"broker {b.broker_id} holds epoch {b.epoch}, which is not a committed " \
                  f"registration of its incarnation"


@invariant(STATE, "seed 004 'Broker Leases' (unfenced once caught up)",
           premise=a_live_registered_broker)
def unfenced_brokers_caught_up(view: KRaftView) -> Iterator[str]:
    """A broker the committed metadata has unfenced, in this broker process's epoch, has
    replayed up to its own registration record."""
    for b in view.brokers:
        reg = view.committed.brokers.get(b.broker_id)
        if (b.alive and reg is not None and not reg.fenced and reg.epoch == b.epoch
                and b.offset < reg.epoch):
            yield f"broker {b.broker_id} is unfenced at epoch {reg.epoch} but has replayed " \
                  f"only to offset {b.offset}"


@invariant(STATE, "KIP-631: standbys are hot (the same committed log)",
           premise=a_registered_broker)
def controllers_agree_on_committed(view: KRaftView) -> Iterator[str]:
    """Every controller that has replayed to the committed offset has the committed image."""
    for c in view.controllers:
        if c.committed_offset == view.hw and c.committed != view.committed:
            yield f"controller {c.index}'s committed image differs from the log's"


@invariant(TRANSITION, "seed 004 PartitionChangeRecord; Kafka's epochs",
           premise=a_partition_in_both)
def epochs_never_decrease(before: KRaftView, after: KRaftView) -> Iterator[str]:
    """A committed partition's leader epoch and partition epoch never decrease."""
    for name, tid, pid, p in _partitions(after.committed):
        q = before.committed.partition(tid, pid)
        if q is None:
            continue
        if p.leader_epoch < q.leader_epoch or p.partition_epoch < q.partition_epoch:
            yield f"{name}-{pid}: epochs ({q.leader_epoch}, {q.partition_epoch}) -> " \
                  f"({p.leader_epoch}, {p.partition_epoch})"


@invariant(TRANSITION, "KAFKA-15021 (an ISR-only change bumped the leader epoch)",
           premise=a_partition_in_both)
def leader_epoch_moves_with_the_leader(before: KRaftView, after: KRaftView) -> Iterator[str]:
    """A committed partition's leader epoch changes exactly when its leader does."""
    for name, tid, pid, p in _partitions(after.committed):
        q = before.committed.partition(tid, pid)
        if q is None:
            continue
        if (p.leader == q.leader) != (p.leader_epoch == q.leader_epoch):
            yield f"{name}-{pid}: leader {q.leader} -> {p.leader}, leader epoch " \
                  f"{q.leader_epoch} -> {p.leader_epoch}"


@invariant(TRANSITION, "seed 004 'Broker Registration' (epochs rise; a retry is idempotent)",
           premise=a_broker_in_both)
def broker_epochs_rise_and_retries_keep_them(before: KRaftView, after: KRaftView
                                             ) -> Iterator[str]:
    """A registered broker's epoch never decreases, and does not change while its
    incarnation stays the same."""
    for b, reg in after.committed.brokers.items():
        old = before.committed.brokers.get(b)
        if old is None:
            continue
        if reg.epoch < old.epoch:
            yield f"broker {b}: epoch {old.epoch} -> {reg.epoch}"
        elif reg.epoch != old.epoch and reg.incarnation_id == old.incarnation_id:
            yield f"broker {b}: the same incarnation registered again at epoch {reg.epoch} " \
                  f"(was {old.epoch})"


@invariant(QUIESCENT, "KIP-631: brokers replay the committed log", premise=always)
def brokers_converge_on_the_committed_image(view: KRaftView) -> Iterator[str]:
    """Once nothing is in flight, every live broker's image equals the committed image."""
    for b in view.brokers:
        if b.alive and b.image != view.committed:
            yield f"broker {b.broker_id}'s image differs from the committed one"


@invariant(QUIESCENT, "seed 004: every request is answered once its records commit",
           premise=always)
def no_answer_left_waiting(view: KRaftView) -> Iterator[str]:
    """Once nothing is in flight (every record appended is committed), no controller still
    holds an answer back: it would wait for a commit that never comes. (Found live, issue 26:
    after a failover a heartbeat that wrote nothing waited for the new epoch's LeaderChange
    control record, which the controller never replays, until another request wrote a record.)"""
    for c in view.controllers:
        if c.waiting_answers:
            yield f"controller {c.index} holds {c.waiting_answers} answer(s) back with " \
                  f"nothing left to commit (committed offset {c.committed_offset})"


CATALOGUE: tuple[Invariant, ...] = (
    one_leader_per_leader_epoch, leader_in_isr_within_replicas, no_fenced_leader,
    fenced_brokers_out_of_isr, nothing_uncommitted_is_visible, unfenced_brokers_caught_up,
    controllers_agree_on_committed, epochs_never_decrease, leader_epoch_moves_with_the_leader,
    broker_epochs_rise_and_retries_keep_them, brokers_converge_on_the_committed_image,
    no_answer_left_waiting,
)
