"""Events: every input the controller and the broker core react to, as plain values.

The adapters (live cluster) and the simulated world (model checker) build these
values -- reading ZooKeeper on the event thread when an event needs data -- and
hand them to ``Controller.handle`` or ``BrokerCore.handle``. Nothing here does I/O.

Controller events mirror Kafka's ``ControllerEvent`` family (seed 000's
listeners, turned into events by the single-threaded event queue model).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from fsm.requests import (
    ControlledShutdownRequest,
    ControlledShutdownResponse,
    ControllerRequest,
    ControllerResponse,
)
from fsm.values import (
    BrokerInfo,
    ClusterSnapshot,
    PartitionStateZk,
    TopicAssignment,
    TopicPartition,
)
from fsm.zk_session_states import ZkClientState


class TimerKind(enum.Enum):
    DELETION_RETRY = "deletion-retry"
    AUTO_REBALANCE = "auto-rebalance"
    ISR_CHANGE_PROPAGATION = "isr-change-propagation"  # broker side
    CONTROLLED_SHUTDOWN_RETRY = "controlled-shutdown-retry"  # broker side


# ---------------------------------------------------------------- controller events


@dataclass(frozen=True, slots=True)
class Startup:
    """The candidate starts with a new ZooKeeper client, already connected: the core records
    NOT_CONNECTED -> CONNECTING -> CONNECTED; the adapter then reads /controller."""


@dataclass(frozen=True, slots=True)
class ControllerChange:
    """``/controller`` changed (or was read at startup). ``active`` is None when the znode is
    absent; ``epoch`` and ``epoch_version`` are ``/controller_epoch``'s value and znode version."""

    active: int | None
    epoch: int
    epoch_version: int


@dataclass(frozen=True, slots=True)
class ClusterLoaded:
    """The answer to ``LoadCluster``: everything a new controller needs."""

    snapshot: ClusterSnapshot


@dataclass(frozen=True, slots=True)
class BrokerChange:
    """Children of ``/brokers/ids`` changed: the full set of registered brokers with epochs."""

    live: tuple[BrokerInfo, ...]


@dataclass(frozen=True, slots=True)
class TopicChange:
    """Children of ``/brokers/topics`` changed. ``names`` is the full set; ``new`` holds the
    assignments of the topics the controller did not know (``Controller.topic_names()``)."""

    names: frozenset[str]
    new: tuple[tuple[str, TopicAssignment], ...]


@dataclass(frozen=True, slots=True)
class PartitionModification:
    """Data of ``/brokers/topics/<topic>`` changed (partition expansion, or a reassignment's
    own write)."""

    topic: str
    assignment: TopicAssignment


@dataclass(frozen=True, slots=True)
class TopicDeletionRequest:
    """Children of ``/admin/delete_topics``: every topic asked to be deleted."""

    topics: frozenset[str]


@dataclass(frozen=True, slots=True)
class ReassignmentRequest:
    """Data of ``/admin/reassign_partitions`` (sorted). The reader (``fsm.reads``) hands none
    while the znode is absent or unreadable; ``present=False`` says the same if an adapter hands
    one anyway: nothing to act on -- not even a znode to clean up. A present znode with no
    entries is ``present=True`` and empty."""

    targets: tuple[tuple[TopicPartition, tuple[int, ...]], ...]
    present: bool = True


@dataclass(frozen=True, slots=True)
class PreferredElectionRequest:
    """Data of ``/admin/preferred_replica_election``. The reader (``fsm.reads``) hands none while
    the znode is absent or unreadable, as Kafka's handler acts only when the znode exists;
    ``present=False`` says the same if an adapter hands one anyway: nothing to elect and no
    znode to delete. A present, empty znode is ``present=True``."""

    partitions: frozenset[TopicPartition]
    present: bool = True


@dataclass(frozen=True, slots=True)
class IsrChangeNotification:
    """Children of ``/isr_change_notification``: the sequence znodes found and the current
    state of every partition they name (read by the event thread)."""

    notifications: tuple[str, ...]
    states: tuple[tuple[TopicPartition, PartitionStateZk], ...]


@dataclass(frozen=True, slots=True)
class ControlledShutdown:
    """A broker's ControlledShutdown request reached the controller (``correlation`` lets the
    adapter route the reply)."""

    request: ControlledShutdownRequest
    correlation: int


@dataclass(frozen=True, slots=True)
class BrokerResponseReceived:
    """A broker answered a controller request (delivered through the channel manager)."""

    broker_id: int
    broker_epoch: int  # the epoch the request was stamped with
    api: str
    response: ControllerResponse
    delete_partitions: bool | None = None
    """For StopReplica: the request's ``delete_partitions`` flag (the world and the channel
    manager know which request this answers). Topic deletion counts only the answers to the
    deleting StopReplica; ``False`` answers are ignored; ``None`` (unknown) counts."""


@dataclass(frozen=True, slots=True)
class SessionStateChange:
    """The controller's own ZooKeeper session moved (kazoo states mapped onto the table:
    SUSPENDED -> CONNECTING, CONNECTED again -> CONNECTED, LOST -> CLOSED)."""

    state: ZkClientState


@dataclass(frozen=True, slots=True)
class WriteFailure:
    """One op of a ``ZkWrite`` that did not commit, with what the znode holds now."""

    path: str
    code: str  # "BadVersion", "NoNode", "NodeExists", "NotEmpty"
    current: object | None = None  # the znode's data value now, when it exists
    current_version: int = -1


@dataclass(frozen=True, slots=True)
class WriteResult:
    """The answer to a ``ZkWrite``. ``fenced``: the ``/controller_epoch`` check failed (another
    controller took over). Ops not named in ``failures`` committed."""

    token: int
    fenced: bool = False
    failures: tuple[WriteFailure, ...] = ()


@dataclass(frozen=True, slots=True)
class TimerFired:
    kind: TimerKind


ControllerEvent = (
    Startup | ControllerChange | ClusterLoaded | BrokerChange | TopicChange
    | PartitionModification | TopicDeletionRequest | ReassignmentRequest
    | PreferredElectionRequest | IsrChangeNotification | ControlledShutdown
    | BrokerResponseReceived | SessionStateChange | WriteResult | TimerFired
)


# ---------------------------------------------------------------- broker core events


@dataclass(frozen=True, slots=True)
class BrokerStarted:
    """The broker process started and its session is up (NOT_RUNNING -> STARTING)."""


@dataclass(frozen=True, slots=True)
class BrokerMetadataLoaded:
    """Startup recovery input (seed 001 section E): assignments and states read from ZooKeeper,
    and the topics queued for deletion (``/admin/delete_topics``), which recovery does not
    start."""

    topics: tuple[tuple[str, TopicAssignment], ...]
    partition_states: tuple[tuple[TopicPartition, PartitionStateZk], ...]
    topics_to_delete: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class BrokerRegistered:
    """``/brokers/ids/<id>`` was created; ``epoch`` is its czxid (RECOVERY -> RUNNING)."""

    epoch: int


@dataclass(frozen=True, slots=True)
class RequestReceived:
    """A controller request arrived on the control plane."""

    request: ControllerRequest
    correlation: int


@dataclass(frozen=True, slots=True)
class IsrChangeWanted:
    """The leader of ``tp`` wants the ISR to become ``isr`` (followers fell behind or caught
    up; in the world this is a fault-free choice, in a broker it comes from fetch progress)."""

    tp: TopicPartition
    isr: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class BrokerWriteResult:
    """The answer to a broker's own conditional ZooKeeper write."""

    token: int
    failures: tuple[WriteFailure, ...] = ()


@dataclass(frozen=True, slots=True)
class ShutdownRequested:
    """SIGTERM: begin controlled shutdown (RUNNING -> PENDING_CONTROLLED_SHUTDOWN)."""

    controlled: bool = True


@dataclass(frozen=True, slots=True)
class ControlledShutdownAnswered:
    """The controller answered this broker's ControlledShutdown. ``broker_epoch`` is the
    epoch the request carried, when the executor knows it: an answer to a previous
    incarnation's request (sent before a session expiry) is then ignored."""

    response: ControlledShutdownResponse
    broker_epoch: int | None = None


@dataclass(frozen=True, slots=True)
class BrokerSessionExpired:
    """The broker's ZooKeeper session expired: its znode is gone; it must re-register."""


@dataclass(frozen=True, slots=True)
class BrokerCrashed:
    """kill -9: everything in memory is lost (any state -> NOT_RUNNING)."""


BrokerEvent = (
    BrokerStarted | BrokerMetadataLoaded | BrokerRegistered | RequestReceived | IsrChangeWanted
    | BrokerWriteResult | ShutdownRequested | ControlledShutdownAnswered | BrokerSessionExpired
    | BrokerCrashed | TimerFired
)
