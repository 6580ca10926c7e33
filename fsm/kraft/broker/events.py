"""What happens to a KRaft broker (events in). Time arrives as events; ids are drawn by the
shell (the core has no clock and no randomness)."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

from fsm.kraft.records.uuid import Uuid
from fsm.kraft.records.values import Replicas

PartitionKey = tuple[Uuid, int]
"""(topic id, partition id): how the KRaft broker names a partition."""


@dataclass(frozen=True, slots=True)
class Start:
    """The process started as incarnation ``incarnation_id`` (fresh per process, never reused).
    ``local_replicas`` are the partitions it finds in its log directories: at the start of
    RECOVERY those the metadata no longer assigns to it are deleted (seed 004)."""

    incarnation_id: Uuid
    now_ms: int
    local_replicas: tuple[PartitionKey, ...] = ()


@dataclass(frozen=True, slots=True)
class MetadataFetched:
    """Committed metadata records, ``records[0]`` at offset ``base_offset``."""

    base_offset: int
    records: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class MetadataSnapshotLoaded:
    """The broker's log was replaced by a snapshot of the committed metadata fetched from the
    quorum's leader (the broker was behind its log start): ``records`` are the snapshot's
    records, the whole image at offset ``end_offset - 1``."""

    end_offset: int
    records: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class ControllerResponse:
    """The controller answered ``request`` (a value this core sent) with ``response``."""

    request: Any
    response: Any


@dataclass(frozen=True, slots=True)
class ControllerUnreachable:
    """``request`` got no answer (timed out, connection lost, no controller)."""

    request: Any


@dataclass(frozen=True, slots=True)
class HeartbeatDue:
    """The timer armed by ``ScheduleHeartbeat`` fired; the time is ``now_ms``."""

    now_ms: int


@dataclass(frozen=True, slots=True)
class SigTerm:
    """Shut down, handing leaderships over first when running."""


@dataclass(frozen=True, slots=True)
class Crashed:
    """The process died (kill -9, the machine lost): any state but NOT_RUNNING ->
    NOT_RUNNING, everything in memory forgotten (ZooKeeper mode's ``BrokerCrashed``). Nobody
    live can send it -- the process is gone with its shell; the checker's world hands it to
    the dying core when it crashes a broker."""


@dataclass(frozen=True, slots=True)
class Exited:
    """The process ended after ``Exit``: SHUTTING_DOWN -> NOT_RUNNING, everything in memory
    forgotten. The shell's last event, once the core's thread has stopped."""


@dataclass(frozen=True, slots=True)
class IsrChangeWanted:
    """The replication layer asks the leader of the partition to shrink or expand its ISR
    (an item of ``IsrChangesWanted``, the event)."""

    topic_id: Uuid
    partition_id: int
    new_isr: Replicas


@dataclass(frozen=True, slots=True)
class IsrChangesWanted:
    """``IsrChangeWanted`` of one or more partitions, sent as one AlterPartition: each
    partition's wish is kept or ignored as if it came alone."""

    changes: tuple[IsrChangeWanted, ...]


@dataclass(frozen=True, slots=True)
class MetadataRequest:
    """A client's Metadata request; ``topics`` None asks for every topic. Answered by
    ``ReplyMetadata(token, ...)``; ``token`` is the shell's, opaque."""

    token: Hashable
    topics: tuple[str, ...] | None = None
