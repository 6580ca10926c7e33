"""``BrokerDriver``: the broker core's event loop, pure; the live broker process and the
world run it over their own ``BrokerPort``.

In rounds: the events of a round are handed to the core (``port.step``), then their effects
are carried out in order, each through ``EFFECTS``, a table by effect type; what the effects
produce (a read's, a registration's, the writes' results) is the next round, handed before
anything queued. Consecutive ``BrokerZkWrite``s go to the port together (the live shell
pipelines them and merges ISR change notifications), their results in order. At most
``MAX_ROUNDS`` rounds per call; nothing more once the shell is halted (asked before each
effect and round of a port that ``may_halt``: the world's never does).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from fsm.driver.controller import MAX_ROUNDS
from fsm.driver.ports import BrokerPort
from fsm.effects import (
    BrokerZkWrite,
    CancelTimer,
    Exit,
    LoadBrokerMetadata,
    Register,
    Respond,
    SendControlledShutdown,
    StartTimer,
)


class BrokerDriver:
    """Drives one broker core: ``process`` a round of events, or ``execute`` effects the
    core returned elsewhere (a controller request handled on the network's thread), and
    then the rounds they lead to."""

    __slots__ = ("port",)

    def __init__(self, port: BrokerPort) -> None:
        self.port = port

    def process(self, events: Sequence[object]) -> None:
        """Hand ``events`` (one round) and what follows from them."""
        port = self.port
        work = list(events)
        rounds = 0
        may_halt = port.may_halt
        while work and not (may_halt and port.halted()):  # ``_rounds``, inline: once a step
            rounds += 1
            assert rounds <= MAX_ROUNDS, f"more than {MAX_ROUNDS} rounds in one call"
            work = self._execute(port.step(work))

    def execute(self, effects: Sequence[object]) -> None:
        """Carry out ``effects`` and hand what they produce, in rounds."""
        self._rounds(self._execute(effects))

    def _rounds(self, work: list[object]) -> None:
        port = self.port
        rounds = 0
        may_halt = port.may_halt
        while work and not (may_halt and port.halted()):
            rounds += 1
            assert rounds <= MAX_ROUNDS, f"more than {MAX_ROUNDS} rounds in one call"
            work = self._execute(port.step(work))

    def _execute(self, effects: Sequence[object]) -> list[object]:
        """Carry out ``effects`` in order: the events they produced."""
        port = self.port
        out: list[object] = []
        writes: list[BrokerZkWrite] = []
        table = EFFECTS
        may_halt = port.may_halt
        for eff in effects:
            if type(eff) is BrokerZkWrite:
                writes.append(eff)
                continue
            if may_halt and port.halted():
                return out
            if writes:
                out += port.write(writes)
                writes = []
            ev = table[type(eff)](port, eff)
            if ev is not None:
                out.append(ev)
        if writes and not (may_halt and port.halted()):
            out += port.write(writes)
        return out


def _respond(port: BrokerPort, eff: Respond) -> object | None:
    return port.respond(eff)


def _send_controlled_shutdown(port: BrokerPort, eff: SendControlledShutdown) -> object | None:
    return port.send_controlled_shutdown(eff)


def _register(port: BrokerPort, eff: Register) -> object | None:
    return port.register(eff)


def _load_metadata(port: BrokerPort, eff: LoadBrokerMetadata) -> object | None:
    return port.load_metadata(eff)


def _start_timer(port: BrokerPort, eff: StartTimer) -> object | None:
    return port.start_timer(eff)


def _cancel_timer(port: BrokerPort, eff: CancelTimer) -> object | None:
    return port.cancel_timer(eff)


def _exit(port: BrokerPort, eff: Exit) -> object | None:
    return port.exit(eff)


EFFECTS: dict[type, Callable[[BrokerPort, object], object | None]] = {
    Respond: _respond,  # type: ignore[dict-item]
    SendControlledShutdown: _send_controlled_shutdown,  # type: ignore[dict-item]
    Register: _register,  # type: ignore[dict-item]
    LoadBrokerMetadata: _load_metadata,  # type: ignore[dict-item]
    StartTimer: _start_timer,  # type: ignore[dict-item]
    CancelTimer: _cancel_timer,  # type: ignore[dict-item]
    Exit: _exit,  # type: ignore[dict-item]
}
"""Broker effect type (but ``BrokerZkWrite``: batched, ``BrokerPort.write``) -> what the
driver does with it (an unknown type: KeyError)."""
