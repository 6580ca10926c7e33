"""The lines of ``kcontrol topics describe``: exactly ZooKeeper-era ``kafka-topics.sh --describe``
(Kafka 2.4-2.7), pure.

Per topic a header ``Topic: t<TAB>PartitionCount: N<TAB>ReplicationFactor: R<TAB>Configs: k=v,...``,
then per partition ``<TAB>Topic: t<TAB>Partition: p<TAB>Leader: L<TAB>Replicas: a,b<TAB>Isr: a,b``,
with ``<TAB>Adding Replicas: ...<TAB>Removing Replicas: ...`` while a reassignment moves the
partition, and ``<TAB>MarkedForDeletion: true`` on every line of a topic being deleted. The
filters print matching partitions only, without headers, as Kafka does. kcontrol's own fields
(``LeaderEpoch``, ``ReassigningTo``, ``PreferredElectionPending``) come with ``verbose`` only;
a znode that did not decode puts an ``Error:`` field on its line.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class PartitionView:
    """One partition as read from ZooKeeper."""

    partition: int
    replicas: tuple[int, ...]
    leader: int | None = None
    """None: no leader (-1) or no partition state."""
    isr: tuple[int, ...] = ()
    leader_epoch: int | None = None
    """None: no partition state."""
    adding: tuple[int, ...] = ()
    removing: tuple[int, ...] = ()
    reassigning: bool = False
    """The topic znode lists replicas being added or removed for this partition."""
    reassigning_to: tuple[int, ...] | None = None
    """Its target in ``/admin/reassign_partitions``, if listed there."""
    election_pending: bool = False
    error: str | None = None
    """Why its state znode could not be decoded."""


@dataclass(frozen=True)
class TopicView:
    """One topic as read from ZooKeeper."""

    name: str
    partitions: tuple[PartitionView, ...] = ()
    configs: tuple[tuple[str, str], ...] = ()
    marked_for_deletion: bool = False
    error: str | None = None
    """Why its topic znode could not be decoded."""


@dataclass(frozen=True)
class Filters:
    """Kafka's ``--under-replicated-partitions`` and ``--unavailable-partitions``."""

    under_replicated: bool = False
    unavailable: bool = False

    @property
    def active(self) -> bool:
        return self.under_replicated or self.unavailable


def ids(brokers: Iterable[int]) -> str:
    return ",".join(str(b) for b in brokers)


def replication_factor(p: PartitionView) -> int:
    """Kafka's: the replicas less those being added while a reassignment moves the partition."""
    return len([b for b in p.replicas if b not in p.adding]) if p.reassigning else len(p.replicas)


def is_under_replicated(p: PartitionView) -> bool:
    return len(p.isr) < replication_factor(p)


def is_unavailable(p: PartitionView, live: frozenset[int]) -> bool:
    return p.leader is None or p.leader not in live


def header_line(topic: TopicView) -> str:
    deleting = "\tMarkedForDeletion: true" if topic.marked_for_deletion else ""
    if topic.error is not None:
        return f"Topic: {topic.name}\tError: {topic.error}{deleting}"
    rf = replication_factor(topic.partitions[0]) if topic.partitions else 0
    configs = ",".join(f"{k}={v}" for k, v in topic.configs)
    return (
        f"Topic: {topic.name}\tPartitionCount: {len(topic.partitions)}\t"
        f"ReplicationFactor: {rf}\tConfigs: {configs}{deleting}"
    )


def partition_line(topic: TopicView, p: PartitionView, *, verbose: bool = False) -> str:
    head = f"\tTopic: {topic.name}\tPartition: {p.partition}"
    deleting = "\tMarkedForDeletion: true" if topic.marked_for_deletion else ""
    if p.error is not None:
        return f"{head}\tReplicas: {ids(p.replicas)}\tError: {p.error}{deleting}"
    leader = "none" if p.leader is None else str(p.leader)
    line = f"{head}\tLeader: {leader}\tReplicas: {ids(p.replicas)}\tIsr: {ids(p.isr)}"
    if p.reassigning:
        line += f"\tAdding Replicas: {ids(p.adding)}\tRemoving Replicas: {ids(p.removing)}"
    if verbose:
        line += f"\tLeaderEpoch: {'none' if p.leader_epoch is None else p.leader_epoch}"
        if p.reassigning_to is not None:
            line += f"\tReassigningTo: {ids(p.reassigning_to)}"
        if p.election_pending:
            line += "\tPreferredElectionPending: true"
    return line + deleting


def describe_lines(
    topics: Iterable[TopicView],
    live: Iterable[int],
    filters: Filters = Filters(),
    *,
    verbose: bool = False,
) -> list[str]:
    """Every line, topics in the order given, partitions by id. With a filter, only the
    partitions it selects (and lines with an error), without topic headers."""
    alive = frozenset(live)
    lines: list[str] = []
    for topic in topics:
        if topic.error is not None or not filters.active:
            lines.append(header_line(topic))
        for p in sorted(topic.partitions, key=lambda v: v.partition):
            selected = p.error is not None or not filters.active or (
                (filters.under_replicated and is_under_replicated(p))
                or (filters.unavailable and is_unavailable(p, alive))
            )
            if selected:
                lines.append(partition_line(topic, p, verbose=verbose))
    return lines
