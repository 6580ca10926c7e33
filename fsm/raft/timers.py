"""The timers a node has armed, kept by the core itself: a ``TimerFired`` for a timer the
core does not hold armed (cancelled, or already fired) is stale and does nothing, and a role
change cancels exactly what the old role armed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsm.raft.effects import FETCH, ArmTimer, CancelTimer

if TYPE_CHECKING:
    from fsm.raft.core import RaftNode


def arm(node: RaftNode, kind: str, delay_ms: int, jitter_ms: int = 0,
        destination: int = -1) -> ArmTimer:
    node.armed = node.armed | {(kind, destination)}
    return ArmTimer(kind, delay_ms, jitter_ms, destination)


def arm_fetch(node: RaftNode) -> ArmTimer:
    """A follower's fetch timer: the fetch timeout, spread by its jitter (``RaftConfig``)."""
    cfg = node.config
    return arm(node, FETCH, cfg.fetch_timeout_ms, cfg.fetch_timeout_jitter_ms)


def cancel(node: RaftNode, kind: str, destination: int = -1) -> list[CancelTimer]:
    if (kind, destination) not in node.armed:
        return []
    node.armed = node.armed - {(kind, destination)}
    return [CancelTimer(kind, destination)]


def cancel_all(node: RaftNode, keep: frozenset[tuple[str, int]] = frozenset()
               ) -> list[CancelTimer]:
    """Cancel every armed timer but those in ``keep`` (which stay armed, deadlines unchanged)."""
    out = [CancelTimer(kind, dest) for kind, dest in sorted(node.armed)
           if (kind, dest) not in keep]
    node.armed = node.armed & keep
    return out


def fired(node: RaftNode, kind: str, destination: int) -> bool:
    """Take the timer off the armed set; False when it was not armed (a stale fire)."""
    if (kind, destination) not in node.armed:
        return False
    node.armed = node.armed - {(kind, destination)}
    return True
