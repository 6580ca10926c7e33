"""The ports a driver hands the cores' effects to (``typing.Protocol``s, implemented by the
live shell and by the checker's world).

A port does what one effect asks, in the shell's own terms; it decides nothing the cores'
contract (``fsm.effects``) fixes -- the order, the write in flight, the follow-up reads are
the driver's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from fsm.effects import (
    BrokerZkWrite,
    CancelTimer,
    Exit,
    LoadBrokerMetadata,
    Register,
    ReplyControlledShutdown,
    Respond,
    SendControlledShutdown,
    SendRequest,
    StartTimer,
    ZkWrite,
)
from fsm.events import BrokerWriteResult, WriteResult
from fsm.reads.markers import Marker
from fsm.values import BrokerInfo


class ControllerPort(Protocol):
    """What a controller candidate's shell does for its driver (``ControllerDriver``)."""

    def write(self, write: ZkWrite) -> WriteResult | None:
        """Commit ``write`` fenced by ``/controller_epoch`` (``fsm.effects`` rule 1): its
        result now (the live event thread blocks on the commit), or None: pending, handed
        back later by ``ControllerDriver.write_done`` (the world commits in a step of its
        own)."""

    def read(self, marker: Marker) -> object | None:
        """The event ``marker`` stands for, read now (``fsm.reads.materialize`` over the
        shell's ``ReadPort``); None: nothing to hand (the read failed on a lost connection
        and the shell holds the marker until it is connected again, or there is nothing to
        report)."""

    def defer(self, items: Sequence[object]) -> None:
        """Queue ``items`` (markers) in front of every other event: follow-up work left when
        a write became pending, done after its result."""

    def send(self, effect: SendRequest) -> None:
        """Queue the (stamped) request on the channel to ``effect.broker_id``; a channel
        manager that does not know the broker drops it."""

    def reply_controlled_shutdown(self, effect: ReplyControlledShutdown) -> None:
        """Answer the ControlledShutdown ``effect.broker_id`` sent with ``effect.correlation``."""

    def announce_brokers(self, live: tuple[BrokerInfo, ...]) -> None:
        """Tell the channel manager the registered brokers (endpoints, epochs) as last read."""

    def remove_broker_channel(self, broker_id: int) -> None:
        """Drop the channel to ``broker_id`` and forget the broker (sends to it are dropped
        until it is announced again)."""

    def start_timer(self, effect: StartTimer) -> None:
        """Fire ``TimerFired(effect.kind)`` after ``effect.delay_ms`` (restarting it)."""

    def cancel_timer(self, effect: CancelTimer) -> None:
        """Cancel the timer ``effect.kind`` if it runs."""

    def became_controller(self, epoch: int) -> None:
        """This candidate is the active controller with ``epoch``."""

    def resigned(self, reason: str) -> None:
        """This candidate resigned: drop controller-only watches and events, timers and
        channels; give up ``/controller`` if the session still owns it."""

    def release_controller(self) -> None:
        """Give up ``/controller`` if this candidate's session owns it while the candidate
        is not the controller (Kafka's controller move), if it can now."""


class BrokerPort(Protocol):
    """What a broker process's shell does for its driver (``BrokerDriver``). A call that
    produces an event answers with it (None: nothing now); the driver hands it in the next
    round."""

    may_halt: bool
    """Whether ``halted`` can ever answer True (the live process stops; the world's shell
    never does, so its driver does not ask)."""

    def step(self, events: Sequence[object]) -> list[object]:
        """The broker core's ``handle`` of each of ``events``, in order: their effects, in
        order (the live shell takes the core's lock per slice of a long round)."""

    def halted(self) -> bool:
        """The shell is stopping: carry out and hand nothing more (asked only when
        ``may_halt``)."""

    def write(self, writes: Sequence[BrokerZkWrite]) -> list[BrokerWriteResult]:
        """Commit consecutive ``writes`` (each op on its own, conditional on its version, not
        fenced): their results, in order (the live shell sends them together)."""

    def respond(self, effect: Respond) -> object | None:
        """Answer the controller request being handled."""

    def send_controlled_shutdown(self, effect: SendControlledShutdown) -> object | None:
        """Send ControlledShutdown to the active controller; its answer comes back later as
        ``ControlledShutdownAnswered`` (or never: the core's retry timer asks again)."""

    def register(self, effect: Register) -> object | None:
        """Create ``/brokers/ids/<id>``: ``BrokerRegistered(epoch)``, or None (retried or
        deferred by the shell)."""

    def load_metadata(self, effect: LoadBrokerMetadata) -> object | None:
        """Read assignments and partition states: ``BrokerMetadataLoaded``, or None
        (retried or deferred by the shell)."""

    def start_timer(self, effect: StartTimer) -> object | None:
        """Fire ``TimerFired(effect.kind)`` after ``effect.delay_ms`` (restarting it)."""

    def cancel_timer(self, effect: CancelTimer) -> object | None:
        """Cancel the timer ``effect.kind`` if it runs."""

    def exit(self, effect: Exit) -> object | None:
        """The shutdown is complete: the process exits (the world answers
        ``BrokerCrashed``: the process is gone)."""
