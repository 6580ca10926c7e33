"""``WorldBrokerPort``: the world's side of the broker driver (``fsm.driver.BrokerDriver``).

The world runs the live broker process's loop and differs from it only here: the core's
steps go through the step memo; writes are committed to the in-memory ZooKeeper each op on
its own (or fail with ``ConnectionLoss`` while the broker's connection is lost); a read or
a registration while the connection is lost, or a second ZooKeeper call in one step, is
deferred to a ``broker-io`` step; a response rides the channel back with its request; an
exit is the process going away; and every action is described in lines. One port per step
(``broker_driver_for``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from fsm.driver import BrokerDriver
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
from fsm.events import BrokerCrashed, BrokerResponseReceived, BrokerWriteResult, WriteFailure
from fsm.requests import StopReplicaRequest
from model_check.world import describe as D
from model_check.world import reads as R
from model_check.world.channels import RESPONSE, SHUTDOWN, ChannelKey
from model_check.world.zookeeper import ZooKeeper

if TYPE_CHECKING:
    from fsm.requests import ControllerRequest
    from model_check.world.world import World


class WorldBrokerPort:
    """Broker core ``b``'s port in world ``w`` for one step; ``reply_to`` and ``request``:
    the controller and the request being handled (a ``deliver`` step), for ``Respond``."""

    __slots__ = ("b", "lines", "reply_to", "request", "w")

    may_halt = False  # the world's broker shell never stops mid-step

    def __init__(self, w: World, b: int, lines: list[str], reply_to: int | None,
                 request: ControllerRequest | None) -> None:
        self.w = w
        self.b = b
        self.lines = lines
        self.reply_to = reply_to
        self.request = request

    def step(self, events: Sequence[object]) -> list[object]:
        w, b, lines = self.w, self.b, self.lines
        out: list[object] = []
        for ev in events:
            effects, before, after = w.broker_handle(b, ev)
            if w.describing:
                moved = f" [{before.value} -> {after.value}]" if before is not after else ""
                lines.append(f"b{b} handle {D.event(ev)}{moved}")
            out += effects
        return out

    def halted(self) -> bool:
        return False

    def write(self, writes: Sequence[BrokerZkWrite]) -> list[BrokerWriteResult]:
        return [self._write(eff) for eff in writes]

    def _write(self, eff: BrokerZkWrite) -> BrokerWriteResult:
        from model_check.world.executor import failures_of

        w, b, lines = self.w, self.b, self.lines
        d = _d(w)
        failures: list[WriteFailure] = []
        if w.procs[b].broker_disconnected:  # adapters.broker.effects: nothing committed
            for op in eff.ops:
                failures.append(WriteFailure(op.path, "ConnectionLoss"))
                lines.append(f"b{b} zk {d.op(op)} FAILED ConnectionLoss (connection lost)")
            return BrokerWriteResult(eff.token, tuple(failures))
        for op in eff.ops:
            r = w.zk_call(ZooKeeper.multi, (op,))
            if r.ok:
                created = r.results[0].path
                lines.append(f"b{b} zk {d.op(op) if created == op.path else 'create ' + created}")
            else:
                failures += failures_of(w, (op,), r)
                lines.append(f"b{b} zk {d.op(op)} FAILED {r.results[0].code}")
        return BrokerWriteResult(eff.token, tuple(failures))

    def respond(self, effect: Respond) -> object | None:
        w, b, reply_to, request = self.w, self.b, self.reply_to, self.request
        assert reply_to is not None and request is not None, "Respond without a request"
        delete = request.delete_partitions if isinstance(request, StopReplicaRequest) else None
        resp = BrokerResponseReceived(b, request.broker_epoch, request.api, effect.response,
                                      delete)
        if w.procs[reply_to].up:  # the request rides along: a lost answer means a resend
            w.ch_send(ChannelKey(RESPONSE, b, reply_to), (request, resp))
        if w.describing:
            self.lines.append(f"b{b} respond -> c{reply_to} {request.api} "
                              f"{effect.response.error.name}")
        return None

    def send_controlled_shutdown(self, effect: SendControlledShutdown) -> object | None:
        w, b, lines = self.w, self.b, self.lines
        if w.procs[b].broker_disconnected:  # the read of /controller fails
            lines.append(f"b{b} ControlledShutdown lost: ZooKeeper connection lost")
            return None
        c = w.zk_read(R.active_controller)
        if c is None or not w.procs[c].up:
            lines.append(f"b{b} ControlledShutdown lost: no controller")
        else:
            # the correlation is the request's broker epoch: it comes back with the answer
            epoch = effect.request.broker_epoch
            w.ch_send(ChannelKey(SHUTDOWN, b, c), (epoch, effect.request))
            lines.append(f"b{b} send ControlledShutdown(be={epoch}) -> c{c}")
        return None

    def register(self, effect: Register) -> object | None:
        from model_check.world.executor import register

        if self._deferred("register"):
            return None
        return register(self.w, self.b, self.lines)

    def load_metadata(self, effect: LoadBrokerMetadata) -> object | None:
        if self._deferred("load"):
            return None
        return self.w.zk_read(R.broker_metadata)

    def _deferred(self, io: str) -> bool:
        """Whether the read or registration ``io`` waits for a ``broker-io`` step: the
        connection is lost, or this step made its ZooKeeper call already."""
        w, b = self.w, self.b
        proc = w.procs[b]
        if not (proc.broker_disconnected or proc.broker_io):
            return False
        w.procs[b] = proc._replace(broker_io=io)
        self.lines.append(f"b{b} {io} deferred: " + ("ZooKeeper connection lost"
                                                      if proc.broker_disconnected
                                                      else "one ZooKeeper call per step"))
        return True

    def start_timer(self, effect: StartTimer) -> object | None:
        self.w.timers.add((self.b, "b", effect.kind.value))
        return None

    def cancel_timer(self, effect: CancelTimer) -> object | None:
        self.w.timers.discard((self.b, "b", effect.kind.value))
        return None

    def exit(self, effect: Exit) -> object | None:
        from model_check.world.executor import process_gone

        self.lines.append(f"b{self.b} exit")
        process_gone(self.w, self.b)
        return BrokerCrashed()


def broker_driver_for(w: World, b: int, lines: list[str], reply_to: int | None = None,
                      request: ControllerRequest | None = None) -> BrokerDriver:
    """The driver of broker core ``b`` for one step of ``w``."""
    return BrokerDriver(WorldBrokerPort(w, b, lines, reply_to, request))


def _d(w: World) -> object:
    return D if w.describing else D.Quiet
