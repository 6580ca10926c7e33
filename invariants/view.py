"""``GlobalView``: the neutral, immutable snapshot every invariant reads.

The same predicates serve the model checker (``model_check.world.global_view``), the tests
(hand-built views) and a live audit of a real cluster (issue 4). So the view holds plain
values only -- ints, strings, tuples and the small frozen dataclasses below -- never a
``World``, a ``Controller`` or a ``BrokerCore``.

Parts a source cannot see are ``None`` (a live audit does not know the controllers'
in-memory state; a ZooKeeper-only audit sees no broker). Predicates skip what is absent.

Collections are tuples sorted by key, so two views of the same cluster compare equal.
Lookups (``zk.state(tp)``, ``broker(b)`` ...) are computed once per view and cached.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from fsm.broker_states import BrokerState
from fsm.values import NO_LEADER, TopicPartition

__all__ = [
    "LEADER",
    "FOLLOWER",
    "NO_LEADER",
    "SERVING",
    "STOPPED",
    "AppliedView",
    "BrokerView",
    "ControllerView",
    "GlobalView",
    "MetadataPartitionView",
    "MetadataView",
    "PartitionStateView",
    "ReplicaView",
    "ZkView",
]

LEADER = "leader"
FOLLOWER = "follower"
STOPPED = "stopped"
"""Replica roles (the values of ``fsm.broker.ReplicaRole``)."""

SERVING = frozenset({BrokerState.RUNNING.value, BrokerState.PENDING_CONTROLLED_SHUTDOWN.value})
"""Lifecycle states in which a broker takes controller requests and serves clients."""


@dataclass(frozen=True)
class PartitionStateView:
    """``/brokers/topics/<t>/partitions/<p>/state``: its data, znode version and czxid (the
    czxid tells two incarnations of a partition apart: a topic deleted and created again)."""

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    controller_epoch: int
    version: int
    czxid: int = 0


@dataclass(frozen=True)
class ZkView:
    """What ZooKeeper holds (Kafka's layout, ``reference/kafka-zookeeper-layout.md``).

    ``controller``: the broker ``/controller`` names (None: absent). ``controller_epoch`` and
    ``controller_epoch_version``: ``/controller_epoch``'s value and znode version (None:
    absent). ``brokers``: registered ``(id, epoch)`` (epoch = czxid). ``assignments``:
    ``(tp, replicas)`` from the topic znodes. ``partitions``: ``(tp, state)``.
    ``topics_pending_deletion``: children of ``/admin/delete_topics``.
    ``reassignments_pending``: ``(tp, target)`` in ``/admin/reassign_partitions``.
    ``isr_change_notifications``: children of ``/isr_change_notification``."""

    controller: int | None = None
    controller_epoch: int | None = None
    controller_epoch_version: int | None = None
    brokers: tuple[tuple[int, int], ...] = ()
    assignments: tuple[tuple[TopicPartition, tuple[int, ...]], ...] = ()
    partitions: tuple[tuple[TopicPartition, PartitionStateView], ...] = ()
    topics_pending_deletion: tuple[str, ...] = ()
    reassignments_pending: tuple[tuple[TopicPartition, tuple[int, ...]], ...] = ()
    isr_change_notifications: tuple[str, ...] = ()

    @cached_property
    def registered(self) -> dict[int, int]:
        """Registered broker id -> broker epoch."""
        return dict(self.brokers)

    @cached_property
    def assignment(self) -> dict[TopicPartition, tuple[int, ...]]:
        return dict(self.assignments)

    @cached_property
    def states(self) -> dict[TopicPartition, PartitionStateView]:
        return dict(self.partitions)

    @cached_property
    def topics(self) -> frozenset[str]:
        return frozenset(t for (t, _), _r in self.assignments)

    @cached_property
    def deleting(self) -> frozenset[str]:
        return frozenset(self.topics_pending_deletion)

    @cached_property
    def reassigning(self) -> dict[TopicPartition, tuple[int, ...]]:
        return dict(self.reassignments_pending)


@dataclass(frozen=True)
class ControllerView:
    """One controller candidate (hosted by broker ``broker_id``). ``live``: the brokers it
    holds live (registered, as its last ``BrokerChange`` or cluster load read them; None:
    unknown); ``shutting_down``: those of them in a controlled shutdown (not eligible to
    lead). Only an active controller's are meaningful; a candidate's are empty."""

    broker_id: int
    up: bool
    active: bool
    epoch: int
    live: tuple[int, ...] | None = None
    shutting_down: tuple[int, ...] = ()


@dataclass(frozen=True)
class ReplicaView:
    """A broker's local replica: ``role`` is ``LEADER``, ``FOLLOWER`` or ``STOPPED``;
    ``fenced``: its own conditional ISR write failed, it no longer acts as leader."""

    role: str
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    zk_version: int
    fenced: bool = False


@dataclass(frozen=True)
class MetadataPartitionView:
    """One partition of a broker's metadata cache (what a MetadataRequest answers)."""

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    replicas: tuple[int, ...]


@dataclass(frozen=True)
class MetadataView:
    """A broker's metadata cache: controller id, live ``(id, epoch)``, partitions."""

    controller_id: int | None = None
    live_brokers: tuple[tuple[int, int], ...] = ()
    partitions: tuple[tuple[TopicPartition, MetadataPartitionView], ...] = ()


@dataclass(frozen=True)
class AppliedView:
    """The last controller request a broker applied in this incarnation: its controller
    epoch, the broker epoch it was stamped with, and the highest controller epoch the
    broker had applied before it (``fsm.broker.AppliedMark``)."""

    controller_epoch: int
    broker_epoch: int
    highest_before: int


@dataclass(frozen=True)
class BrokerView:
    """One broker: its process is ``up``; ``state`` is the lifecycle state's value
    (``fsm.broker_states.BrokerState``); ``epoch`` the broker epoch it believes it has (None:
    not registered); ``controller_epoch`` the highest controller epoch applied; ``replicas``
    ``(tp, ReplicaView)``; ``metadata`` the metadata cache (None: unknown); ``applied`` the
    last applied request (None: none, or unknown); ``shut_down``: the process stopped
    because its controlled shutdown was answered "nothing remaining" (and has not started
    since; False when unknown)."""

    broker_id: int
    up: bool
    state: str
    epoch: int | None
    controller_epoch: int
    replicas: tuple[tuple[TopicPartition, ReplicaView], ...] = ()
    metadata: MetadataView | None = None
    applied: AppliedView | None = None
    shut_down: bool = False

    @cached_property
    def replica_map(self) -> dict[TopicPartition, ReplicaView]:
        return dict(self.replicas)

    def replica(self, tp: TopicPartition) -> ReplicaView | None:
        return self.replica_map.get(tp)

    @property
    def serving(self) -> bool:
        return self.up and self.state in SERVING


@dataclass(frozen=True)
class GlobalView:
    """The whole cluster at one instant.

    ``zk``, ``controllers``, ``brokers``: None when the source cannot see them.
    ``pending``: something is in flight (a message, a watch notification, a queued event, a
    pending write, an unnoticed session expiry, a timer that matters); None = unknown.
    Quiescent invariants apply only when it is False.
    ``deleted_topics``: topics whose deletion was requested and that are gone from ZooKeeper.
    ``reassign_targets``: ``(tp, target)`` of the reassignments a controller accepted (took
    in flight; the latest per partition), refused requests excluded (None: unknown).
    ``unclean_leader_election``: the cluster may elect a replica outside the ISR."""

    zk: ZkView | None = None
    controllers: tuple[ControllerView, ...] | None = None
    brokers: tuple[BrokerView, ...] | None = None
    pending: bool | None = None
    deleted_topics: tuple[str, ...] = ()
    reassign_targets: tuple[tuple[TopicPartition, tuple[int, ...]], ...] | None = None
    unclean_leader_election: bool = False

    @cached_property
    def broker_map(self) -> dict[int, BrokerView]:
        return {b.broker_id: b for b in self.brokers or ()}

    def broker(self, broker_id: int) -> BrokerView | None:
        return self.broker_map.get(broker_id)

    @cached_property
    def partitions_on_brokers(self) -> frozenset[TopicPartition]:
        """Every partition some broker holds a replica of."""
        return frozenset(tp for b in self.brokers or () for tp, _ in b.replicas)
