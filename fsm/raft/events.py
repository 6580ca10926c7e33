"""What happens to a Raft node: events in. Time arrives as ``now_ms`` on events (for
DescribeQuorum's lags only: no rule of the core depends on it) and as ``TimerFired`` --
a timer the core armed (``effects.ArmTimer``) went off; the shell chose when, adding its own
random jitter (the checker's world fires armed timers in any order)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fsm.raft.messages import OffsetAndEpoch


@dataclass(frozen=True, slots=True)
class Start:
    """The node starts from its ``LogSummary`` and ``QuorumState`` (given to the core's
    constructor): it takes its first role and arms its first timer."""

    now_ms: int = 0


@dataclass(frozen=True, slots=True)
class Received:
    """A request or response from node ``source`` (a message of ``fsm.raft.messages``).
    Responses are matched by type and epoch: a late or duplicated one must do no harm."""

    source: int
    message: Any
    now_ms: int = 0


@dataclass(frozen=True, slots=True)
class TimerFired:
    """``kind``: one of ``effects.TIMERS``. ``destination`` for a per-destination request
    timer (``request``), else -1."""

    kind: str
    destination: int = -1
    now_ms: int = 0


@dataclass(frozen=True, slots=True)
class ClientAppend:
    """The state machine (the active controller) asks to append ``records`` as one batch at
    ``base_offset`` in ``epoch``. Refused (``effects.AppendRefused``) unless this node leads
    ``epoch`` and ``base_offset`` is its log end."""

    epoch: int
    base_offset: int
    records: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class Flushed:
    """The log is durable up to ``end_offset`` (the shell's answer to ``effects.Flush``)."""

    end_offset: int


@dataclass(frozen=True, slots=True)
class SnapshotWritten:
    """The state machine wrote a snapshot of the committed prefix up to ``snapshot_id``:
    the log below it may go (``effects.DeleteBefore``)."""

    snapshot_id: OffsetAndEpoch


@dataclass(frozen=True, slots=True)
class Resign:
    """Step down gracefully (shutdown of the leader): EndQuorumEpoch to the other voters."""

    now_ms: int = 0
