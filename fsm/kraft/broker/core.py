"""``KRaftBroker``: what one KRaft broker does, without I/O (``handle(event) -> effects``).

State: the lifecycle state (``KRAFT_BROKER_TABLE``, moved by ``_move`` only), the
incarnation id and broker epoch, the one registration or heartbeat in flight, the metadata
image replayed from committed records (``MetadataImage.apply``, the controller's own replay)
and the highest offset replayed, the local replicas (``replicas``), and the AlterPartition
requests in flight and wishes queued (``alter_partition``).

Modules: ``lifecycle`` (Start, registration, heartbeats, SIGTERM, the process's end --
``Exited``, ``Crashed`` -- and the lifecycle moves),
``replay`` (committed records in, replica roles out), ``replicas`` (one partition's role
from the image), ``alter_partition`` (the leader's ISR changes), ``metadata_answers``
(client Metadata from the image), ``events``, ``effects``, ``config``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from operator import attrgetter
from typing import Any

from fsm.kraft.broker import alter_partition, lifecycle, metadata_answers, replay
from fsm.kraft.broker.alter_partition import Wish
from fsm.kraft.broker.config import KRaftBrokerConfig
from fsm.kraft.broker.effects import KRaftBrokerEffect, LifecycleChange
from fsm.kraft.broker.events import (
    ControllerResponse,
    ControllerUnreachable,
    Crashed,
    Exited,
    HeartbeatDue,
    IsrChangesWanted,
    MetadataFetched,
    MetadataRequest,
    MetadataSnapshotLoaded,
    PartitionKey,
    SigTerm,
    Start,
)
from fsm.kraft.broker.replicas import LocalReplica
from fsm.kraft.broker_lifecycle_states import KRAFT_BROKER_TABLE, KRaftBrokerState
from fsm.kraft.controller.requests import (
    AlterPartitionRequest,
    AlterPartitionResponse,
    BrokerHeartbeatRequest,
    BrokerHeartbeatResponse,
    BrokerRegistrationRequest,
    BrokerRegistrationResponse,
)
from fsm.kraft.image import MetadataImage
from fsm.kraft.records.uuid import Uuid

Handler = Callable[["KRaftBroker", Any], list[KRaftBrokerEffect]]
AnswerHandler = Callable[["KRaftBroker", Any, Any], list[KRaftBrokerEffect]]

_ANSWERS: dict[type, tuple[type, AnswerHandler]] = {
    BrokerRegistrationRequest: (BrokerRegistrationResponse, lifecycle.registration_answered),
    BrokerHeartbeatRequest: (BrokerHeartbeatResponse, lifecycle.heartbeat_answered),
    AlterPartitionRequest: (AlterPartitionResponse, alter_partition.answered),
}
"""Request class -> (the response class it expects, its handler)."""

_LOST: dict[type, Handler] = {
    BrokerRegistrationRequest: lifecycle.communication_lost,
    BrokerHeartbeatRequest: lifecycle.communication_lost,
    AlterPartitionRequest: alter_partition.lost,
}


def _answered(core: KRaftBroker, ev: ControllerResponse) -> list[KRaftBrokerEffect]:
    entry = _ANSWERS.get(type(ev.request))
    if entry is None or not isinstance(ev.response, entry[0]):
        return core._ignore(f"answer {type(ev.response).__name__} to "
                            f"{type(ev.request).__name__}")
    return entry[1](core, ev.request, ev.response)


def _unreachable(core: KRaftBroker, ev: ControllerUnreachable) -> list[KRaftBrokerEffect]:
    handler = _LOST.get(type(ev.request))
    if handler is None:
        return core._ignore(f"lost {type(ev.request).__name__}")
    return handler(core, ev.request)


_DISPATCH: dict[type, Handler] = {
    Start: lifecycle.start,
    ControllerResponse: _answered,
    ControllerUnreachable: _unreachable,
    HeartbeatDue: lifecycle.heartbeat_due,
    SigTerm: lifecycle.sig_term,
    Exited: lifecycle.exited,
    Crashed: lifecycle.crashed,
    MetadataFetched: lifecycle.metadata_fetched,
    MetadataSnapshotLoaded: replay.snapshot_loaded,
    IsrChangesWanted: alter_partition.isr_changes_wanted,
    MetadataRequest: metadata_answers.answer,
}

HANDLED_EVENTS: tuple[str, ...] = tuple(t.__name__ for t in _DISPATCH)

_LEADER_OF = attrgetter("leader")


class KRaftBroker:
    __slots__ = (
        "config", "_state", "_incarnation", "_start_ms", "_registered_once", "_epoch",
        "_inflight", "_due", "_offset", "_image", "_replicas", "_local",
        "_alter_inflight", "_alter_wanted", "_notes",
    )

    def __init__(self, config: KRaftBrokerConfig) -> None:
        self.config = config
        self._state = KRAFT_BROKER_TABLE.initial
        self._notes: list[str] = []
        self._forget()

    def _forget(self) -> None:
        """What a process knows, as before it starts (``__init__``; and when it ends:
        ``lifecycle.crashed`` / ``exited``, after the move to NOT_RUNNING)."""
        self._incarnation: Uuid | None = None
        self._start_ms = 0
        self._registered_once = False
        self._epoch: int | None = None
        self._inflight: BrokerRegistrationRequest | BrokerHeartbeatRequest | None = None
        self._due = False  # the timer fired while a request was in flight
        self._offset = -1
        self._image = MetadataImage()
        self._replicas: dict[PartitionKey, LocalReplica] = {}
        self._local: frozenset[PartitionKey] = frozenset()
        self._alter_inflight: dict[PartitionKey, AlterPartitionRequest] = {}
        self._alter_wanted: dict[PartitionKey, Wish] = {}

    # ------------------------------------------------------------------ events

    def handle(self, event: object) -> list[KRaftBrokerEffect]:
        handler = _DISPATCH.get(type(event))
        if handler is None:
            return self._ignore(f"unknown event {type(event).__name__}")
        return handler(self, event)

    # ------------------------------------------------------------------ helpers for modules

    def _move(self, target: KRaftBrokerState) -> LifecycleChange:
        """The one place the lifecycle state changes; raises ``IllegalTransition`` on a move
        the table does not allow."""
        source = self._state
        self._state = KRAFT_BROKER_TABLE.check(f"kraft broker {self.config.broker_id}",
                                               source, target)
        return LifecycleChange(source, target)

    def _ignore(self, what: str) -> list[KRaftBrokerEffect]:
        self._notes.append(f"ignored {what} in {self._state.value}")
        return []

    # ------------------------------------------------------------------ queries

    @property
    def broker_id(self) -> int:
        return self.config.broker_id

    @property
    def state(self) -> KRaftBrokerState:
        return self._state

    @property
    def incarnation_id(self) -> Uuid | None:
        return self._incarnation

    @property
    def broker_epoch(self) -> int | None:
        """The epoch of the current registration; None while (re-)registering."""
        return self._epoch

    @property
    def metadata_offset(self) -> int:
        """The highest committed offset replayed (inclusive); -1 before any."""
        return self._offset

    @property
    def image(self) -> MetadataImage:
        """The replayed image (read it, never change it)."""
        return self._image

    def replica(self, topic_id: Uuid, partition_id: int) -> LocalReplica | None:
        return self._replicas.get((topic_id, partition_id))

    def replicas(self) -> tuple[tuple[PartitionKey, LocalReplica], ...]:
        return tuple(sorted(self._replicas.items()))

    def iter_replicas(self) -> Iterator[tuple[PartitionKey, LocalReplica]]:
        """``replicas()`` unsorted, for a reader that needs no order (read it, never keep it
        past the next event)."""
        return iter(self._replicas.items())

    @property
    def replica_count(self) -> int:
        """How many local replicas (``len(replicas())``, without building it)."""
        return len(self._replicas)

    def replica_counts(self) -> tuple[int, int]:
        """(replicas, of which this broker leads): ``replicas()`` counted, without sorting."""
        leaders = list(map(_LEADER_OF, self._replicas.values()))  # in C: 100,000 replicas
        return len(leaders), leaders.count(self.config.broker_id)

    def alter_partition_in_flight(self) -> tuple[PartitionKey, ...]:
        return tuple(sorted(self._alter_inflight))

    def queued_isr_wishes(self) -> tuple[tuple[PartitionKey, Wish], ...]:
        return tuple(sorted(self._alter_wanted.items()))

    def drain_notes(self) -> list[str]:
        """Events ignored since the last call (for the state-change log)."""
        notes, self._notes = self._notes, []
        return notes

    def copy(self) -> KRaftBroker:
        """An independent broker in the same state (for a checker that branches worlds):
        the image is copied, the per-partition values are immutable and shared."""
        other = KRaftBroker.__new__(KRaftBroker)
        for name in self.__slots__:
            value = getattr(self, name)
            if isinstance(value, (dict, list)):
                value = type(value)(value)
            elif isinstance(value, MetadataImage):
                value = value.copy()
            setattr(other, name, value)
        return other

    def __repr__(self) -> str:
        return (f"KRaftBroker({self.config.broker_id}, {self._state.value}, "
                f"epoch={self._epoch}, offset={self._offset}, replicas={len(self._replicas)})")
