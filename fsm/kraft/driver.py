"""``QuorumControllerDriver``: the quorum controller's loop, pure; the checker's world runs it
over its port today, the live KRaft controller process (issue 25) over its own tomorrow.

One event at a time: ``process(event)`` hands it to the core and sends each effect, in order,
to the port through ``EFFECTS``, a table by effect type. Unlike the ZooKeeper-mode driver
there is no write in flight to wait for: appends are pipelined (the controller runs ahead on
its "future state") and their commit comes back later as an event (``Committed``), which the
shell queues like any other. The port's ``append`` may refuse a batch (a stale epoch: the log
has a newer leader); the shell then reports the loss of leadership as an event."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from fsm.kraft.controller.events import AppendRecords, MembershipChange, Reply

MAX_EFFECTS = 100_000
"""Bound on the effects of one event (a fence of a broker leading 10,000 partitions is one
append): more is a bug."""


class QuorumControllerPort(Protocol):
    """What a quorum controller's shell does for its driver."""

    def append(self, effect: AppendRecords) -> None:
        """Append the batch to the metadata log at ``effect.base_offset`` in ``effect.epoch``
        (the log refuses a stale epoch or a wrong offset; the shell then reports a
        ``LeadershipLost``)."""

    def reply(self, effect: Reply) -> None:
        """Send ``effect.response`` to whoever is waiting on ``effect.token``."""

    def membership_changed(self, effect: MembershipChange) -> None:
        """Write the move to the state-change log (and count it)."""


Step = Callable[[object], Sequence[object]]

EFFECTS: dict[type, Callable[[QuorumControllerPort, Any], None]] = {
    AppendRecords: lambda port, e: port.append(e),
    Reply: lambda port, e: port.reply(e),
    MembershipChange: lambda port, e: port.membership_changed(e),
}
"""Effect class -> the port call that carries it out: the one dispatch."""


class EffectDriver:
    """One event to the core (``step``), each of its effects in order to ``port`` through
    ``effects``, the driver's table by effect type; at most ``MAX_EFFECTS`` per event."""

    def __init__(self, step: Step, port: Any, effects: dict[type, Callable[[Any, Any], None]]
                 ) -> None:
        self.step = step
        self.port = port
        self.effects = effects

    def process(self, event: object) -> None:
        effects = self.step(event)
        if len(effects) > MAX_EFFECTS:
            raise AssertionError(f"{len(effects)} effects from one event: a loop")
        table, port = self.effects, self.port
        for effect in effects:
            table[type(effect)](port, effect)


class QuorumControllerDriver(EffectDriver):
    def __init__(self, step: Step, port: QuorumControllerPort) -> None:
        super().__init__(step, port, EFFECTS)
