"""``KRaftBrokerDriver``: the KRaft broker core's loop, pure; the checker's world runs it over
its port, the live KRaft broker process (issue 25) over its own. One event at a time; each
effect, in order, to the port through ``EFFECTS`` (a table by effect type)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from fsm.kraft.broker.effects import (
    BecomeFollower,
    BecomeLeader,
    DeleteReplica,
    Exit,
    LifecycleChange,
    ReplyMetadata,
    ScheduleHeartbeat,
    SendToController,
    UpdateIsr,
)
from fsm.kraft.driver import EffectDriver, Step


class KRaftBrokerPort(Protocol):
    def send_to_controller(self, effect: SendToController) -> None:
        """Send the request to the active controller; its answer (or its loss) comes back as
        an event."""

    def schedule_heartbeat(self, effect: ScheduleHeartbeat) -> None:
        """Fire ``HeartbeatDue`` after ``effect.delay_ms`` (replacing an armed timer)."""

    def replica_role(self, effect: BecomeLeader | BecomeFollower | UpdateIsr | DeleteReplica
                     ) -> None:
        """Tell the replica manager (the log layer) what this broker now is for a partition."""

    def reply_metadata(self, effect: ReplyMetadata) -> None:
        """Answer a client's Metadata."""

    def exit(self, effect: Exit) -> None:
        """The process stops."""

    def lifecycle_changed(self, effect: LifecycleChange) -> None:
        """Write the move to the state-change log."""


EFFECTS: dict[type, Callable[[KRaftBrokerPort, Any], None]] = {
    SendToController: lambda port, e: port.send_to_controller(e),
    ScheduleHeartbeat: lambda port, e: port.schedule_heartbeat(e),
    BecomeLeader: lambda port, e: port.replica_role(e),
    BecomeFollower: lambda port, e: port.replica_role(e),
    UpdateIsr: lambda port, e: port.replica_role(e),
    DeleteReplica: lambda port, e: port.replica_role(e),
    ReplyMetadata: lambda port, e: port.reply_metadata(e),
    Exit: lambda port, e: port.exit(e),
    LifecycleChange: lambda port, e: port.lifecycle_changed(e),
}


class KRaftBrokerDriver(EffectDriver):
    def __init__(self, step: Step, port: KRaftBrokerPort) -> None:
        super().__init__(step, port, EFFECTS)
