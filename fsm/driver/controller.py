"""``ControllerDriver``: the controller's event loop, pure; the live service and the world
run it over their own ``ControllerPort``.

One event at a time: ``step(event)`` (the core's ``handle``, as the shell calls it) returns
the effects in order; each goes to the port through ``EFFECTS``, a table by effect type.
Rules (``fsm.effects``; ``docs/core-contract.md``):

* **one write in flight.** ``port.write`` answers at once (live: the event thread blocks
  on the commit) or later (the world: the commit is a step of its own, an interleaving
  point). The result is handed to the controller *before anything else*: right after the
  round that decided the write, or by ``write_done`` when it comes later -- until then the
  driver takes no event (``awaiting_write``) and the follow-up work left is ``defer``-red
  to the front of the shell's queue.
* **follow-up reads.** ``LoadCluster`` is read after the effects of its round (and after
  the result of a write decided with it), as a ``LOAD`` marker through ``port.read``: a
  read that fails on a lost connection is held by the shell, never lost.
* **the channel manager knows the registered brokers.** Before a ``BrokerChange`` or a
  ``ClusterLoaded`` is handed, its brokers are announced (``port.announce_brokers``); after
  ``RemoveBrokerChannel`` for a broker that the ``BrokerChange`` being handled lists as
  live (a bounced broker: same id, new epoch), they are announced again -- removing the old
  incarnation's channel also forgot the broker, and the requests to the new one that follow
  would be dropped as "unknown broker" (found by the live fault campaign).
* **``/controller`` given up** (``port.release_controller``) after a fenced write's result
  (an election applied whose answer was lost leaves it owned) and after the session is
  ``CONNECTED`` again (a disconnected client could not delete it).
* at most ``MAX_ROUNDS`` events per call: a loop is a bug.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from fsm.driver.ports import ControllerPort
from fsm.effects import (
    BecameController,
    CancelTimer,
    LoadCluster,
    RemoveBrokerChannel,
    ReplyControlledShutdown,
    Resigned,
    SendRequest,
    StartTimer,
    ZkWrite,
)
from fsm.events import BrokerChange, ClusterLoaded, SessionStateChange, WriteResult
from fsm.reads.markers import LOAD_MARKER, Marker
from fsm.zk_session_states import ZkClientState

MAX_ROUNDS = 64
"""Bound on the events one call hands (the first and its synchronous follow-ups)."""

Step = Callable[[object], Sequence[object]]
"""The core's ``handle``, as the shell calls it (the world's step memo, the live service's
state-change log drained after it)."""


class ControllerDriver:
    """Drives one controller candidate: ``process`` a queued item, ``write_done`` a write's
    result that came later. ``awaiting``: the token of the write in flight (a driver made for
    a world step starts with the world's pending write)."""

    __slots__ = ("_result", "_work", "awaiting", "port", "step")

    def __init__(self, step: Step, port: ControllerPort, awaiting: int | None = None) -> None:
        self.step = step
        self.port = port
        self.awaiting = awaiting
        self._work: list[object] = []
        self._result: WriteResult | None = None

    @property
    def awaiting_write(self) -> bool:
        """A write is in flight: no event may be handed before its result."""
        return self.awaiting is not None

    def process(self, item: object) -> bool:
        """Hand ``item`` (an event, or a marker read first) and what follows from it; False:
        nothing was handed (the marker's read gave nothing)."""
        assert self.awaiting is None, f"an event while write #{self.awaiting} is in flight"
        handed = self._run(item)
        if type(item) is SessionStateChange and item.state is ZkClientState.CONNECTED:
            self.port.release_controller()  # what could not be given up while disconnected
        return handed

    def write_done(self, result: WriteResult) -> None:
        """The result of the write in flight, which ``port.write`` left pending."""
        assert self.awaiting == result.token, \
            f"result of write #{result.token}, awaiting {self.awaiting}"
        self.awaiting = None
        self._run(result)

    def _run(self, first: object) -> bool:
        port, step, work = self.port, self.step, self._work
        work.append(first)
        handed = False
        rounds = 0
        while work:
            if self.awaiting is not None:  # after the result (``write_done``)
                port.defer(tuple(work))
                work.clear()
                break
            ev = work.pop(0)
            if type(ev) is Marker:
                ev = port.read(ev)
                if ev is None:
                    continue
            rounds += 1
            assert rounds <= MAX_ROUNDS, f"more than {MAX_ROUNDS} rounds in one call"
            handed = True
            kind = type(ev)
            if kind is BrokerChange:
                port.announce_brokers(ev.live)  # type: ignore[attr-defined]
            elif kind is ClusterLoaded:
                port.announce_brokers(ev.snapshot.live_brokers)  # type: ignore[attr-defined]
            self._result = None
            effects = EFFECTS
            for eff in step(ev):
                effects[type(eff)](self, eff, ev)
            result = self._result
            if result is not None:
                self._result = None
                work.insert(0, result)  # before any other event
            elif kind is WriteResult and ev.fenced:  # type: ignore[attr-defined]
                port.release_controller()
        return handed


# ---------------------------------------------------------------- the effects


def _write(d: ControllerDriver, eff: ZkWrite, ev: object) -> None:
    assert d.awaiting is None and d._result is None, "a second write before a result"
    result = d.port.write(eff)
    if result is None:
        d.awaiting = eff.token
    else:
        d._result = result


def _load(d: ControllerDriver, eff: LoadCluster, ev: object) -> None:
    d._work.append(LOAD_MARKER)


def _send(d: ControllerDriver, eff: SendRequest, ev: object) -> None:
    d.port.send(eff)


def _reply(d: ControllerDriver, eff: ReplyControlledShutdown, ev: object) -> None:
    d.port.reply_controlled_shutdown(eff)


def _remove_channel(d: ControllerDriver, eff: RemoveBrokerChannel, ev: object) -> None:
    port = d.port
    port.remove_broker_channel(eff.broker_id)
    if type(ev) is BrokerChange:
        live = ev.live
        if any(info.broker_id == eff.broker_id for info in live):
            port.announce_brokers(live)  # a bounced broker: known again, a fresh channel


def _start_timer(d: ControllerDriver, eff: StartTimer, ev: object) -> None:
    d.port.start_timer(eff)


def _cancel_timer(d: ControllerDriver, eff: CancelTimer, ev: object) -> None:
    d.port.cancel_timer(eff)


def _became(d: ControllerDriver, eff: BecameController, ev: object) -> None:
    d.port.became_controller(eff.epoch)


def _resigned(d: ControllerDriver, eff: Resigned, ev: object) -> None:
    d.port.resigned(eff.reason)


EFFECTS: dict[type, Callable[[ControllerDriver, object, object], None]] = {
    ZkWrite: _write,  # type: ignore[dict-item]
    LoadCluster: _load,  # type: ignore[dict-item]
    SendRequest: _send,  # type: ignore[dict-item]
    ReplyControlledShutdown: _reply,  # type: ignore[dict-item]
    RemoveBrokerChannel: _remove_channel,  # type: ignore[dict-item]
    StartTimer: _start_timer,  # type: ignore[dict-item]
    CancelTimer: _cancel_timer,  # type: ignore[dict-item]
    BecameController: _became,  # type: ignore[dict-item]
    Resigned: _resigned,  # type: ignore[dict-item]
}
"""Controller effect type -> what the driver does with it (an unknown type: KeyError)."""
