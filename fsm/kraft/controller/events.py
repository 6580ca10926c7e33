"""What happens to a quorum controller (events in) and what it asks its shell to do
(effects out).

Time, leadership of the metadata log and commits all arrive as events: the core has no clock
and does not know whether its log is in memory (issue 23) or Raft (issue 24)."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fsm.kraft.image.image import MetadataImage


# -- events ----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ControllerRequest:
    """A request to answer through ``Reply(token, ...)``; ``token`` is the shell's, opaque."""

    token: Hashable
    request: Any


@dataclass(frozen=True, slots=True)
class Tick:
    """The time is now ``now_ms`` (monotonic). Leases are measured against it."""

    now_ms: int


@dataclass(frozen=True, slots=True)
class LeadershipGained:
    """This controller leads the metadata log in ``epoch``; its next record takes
    ``log_end_offset`` (everything before it is committed and replayed here)."""

    epoch: int
    log_end_offset: int
    now_ms: int


@dataclass(frozen=True, slots=True)
class LeadershipLost:
    """Another controller leads (or none); uncommitted records of ours are gone."""

    epoch: int


@dataclass(frozen=True, slots=True)
class Committed:
    """Every record up to ``offset`` (inclusive) is committed (the active controller)."""

    offset: int


@dataclass(frozen=True, slots=True)
class Replayed:
    """Committed records from the log, ``records[0]`` at ``base_offset`` (a standby)."""

    base_offset: int
    records: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class SnapshotLoaded:
    """A standby's log was replaced by a snapshot fetched from the leader (it was behind the
    leader's log start): the committed image is ``records`` (a snapshot's canonical records),
    the last committed offset ``end_offset - 1``. ``image``: the records already replayed,
    when the shell built the image as it read the snapshot (``records`` then empty; a
    controller node at 1,000,000 partitions, issue 26: no million records held at once)."""

    end_offset: int
    records: tuple[Any, ...]
    image: MetadataImage | None = None


# -- effects ---------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class AppendRecords:
    """Append ``records`` at ``base_offset`` in ``epoch``, as one atomic batch."""

    epoch: int
    base_offset: int
    records: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class Reply:
    token: Hashable
    response: Any


@dataclass(frozen=True, slots=True)
class MembershipChange:
    """A broker's membership moved (checked against ``MEMBERSHIP_TABLE``), for the
    state-change log and the checker's coverage."""

    broker_id: int
    source: str
    target: str
    offset: int
    reason: str
