"""``WorldControllerPort``: the world's side of the controller driver (``fsm.driver``).

The world runs the live service's loop (``ControllerDriver``) and differs from it only here:
a write is recorded as pending (``World.writes``) and committed by a ``commit`` step of its
own (``executor.do_commit``), so ``write`` answers None; a marker is read from the in-memory
ZooKeeper through the step memo; the channels are the world's; and every action is
described in lines. One port per step (``driver_for``): it holds the world, the candidate
and the step's lines.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from fsm.driver import ControllerDriver
from fsm.effects import CancelTimer, ReplyControlledShutdown, SendRequest, StartTimer, ZkWrite
from fsm.events import ClusterLoaded, ReassignmentRequest, WriteResult
from fsm.reads import MARKERS
from fsm.reads.markers import Marker
from fsm.values import BrokerInfo
from model_check.world import describe as D
from model_check.world import reads as R
from model_check.world import state as S
from model_check.world.channels import REQUEST, SHUTDOWN_REPLY, ChannelKey, Channels

if TYPE_CHECKING:
    from model_check.world.world import World


class WorldControllerPort:
    """Controller candidate ``b``'s port in world ``w``; what happened goes to ``lines``
    (``describe``d in full only while ``w.describing``)."""

    __slots__ = ("b", "lines", "w")

    def __init__(self, w: World, b: int, lines: list[str]) -> None:
        self.w = w
        self.b = b
        self.lines = lines

    def step(self, event: object) -> Sequence[object]:
        """The core's ``handle``, through the step memo; the line, the reassignments taken."""
        w, b = self.w, self.b
        effects = w.controller_handle(b, event)
        if w.describing:
            self.lines.append(f"c{b} handle {D.event(event)}")
        if type(event) in _MAY_ACCEPT_REASSIGNMENTS:
            _record_accepted(w, w.controllers[b])
        return effects  # type: ignore[no-any-return]

    def write(self, write: ZkWrite) -> WriteResult | None:
        w, b = self.w, self.b
        assert b not in w.writes, f"controller {b} decided a second write before a result"
        w.writes[b] = S.PendingWrite(write, w.procs[b].controller_session)
        if w.describing:
            self.lines.append(f"c{b} decide write #{write.token} fence={write.fence_version}: "
                              + "; ".join(D.op(o) for o in write.ops))
        return None  # committed by a step of its own (``executor.do_commit``)

    def read(self, marker: Marker) -> object | None:
        w, b = self.w, self.b
        if w.procs[b].controller_disconnected:  # the read fails: held, read once CONNECTED
            w.enqueue(b, marker, front=True)
            return None
        return materialize(w, b, marker)

    def defer(self, items: Sequence[object]) -> None:
        for item in reversed(items):
            self.w.enqueue(self.b, item, front=True)

    def send(self, effect: SendRequest) -> None:
        w, c, target = self.w, self.b, effect.broker_id
        if target in w.procs[c].forgotten:
            self.lines.append(f"c{c} send -> b{target} dropped (unknown broker): "
                              f"{_d(w).request(effect.request)}")
            return
        if not w.procs[target].up:
            self.lines.append(f"c{c} send -> b{target} lost (down): "
                              f"{_d(w).request(effect.request)}")
            return
        w.ch_send(ChannelKey(REQUEST, c, target), (0, effect.request))
        if w.describing:
            self.lines.append(f"c{c} send -> b{target} {D.request(effect.request)}")

    def reply_controlled_shutdown(self, effect: ReplyControlledShutdown) -> None:
        w, b, target = self.w, self.b, effect.broker_id
        if w.procs[target].up:
            w.ch_send(ChannelKey(SHUTDOWN_REPLY, b, target), (effect.correlation,
                                                              effect.response))
            self.lines.append(f"c{b} reply ControlledShutdown -> b{target} "
                              f"{effect.response.error.name} "
                              f"remaining={len(effect.response.remaining)}")
        else:
            self.lines.append(f"c{b} reply ControlledShutdown -> b{target} lost (down)")

    def announce_brokers(self, live: tuple[BrokerInfo, ...]) -> None:
        w, b = self.w, self.b
        proc = w.procs[b]
        if proc.forgotten:  # the channel manager knows them again
            ids = {info.broker_id for info in live}
            w.procs[b] = proc._replace(forgotten=tuple(x for x in proc.forgotten
                                                       if x not in ids))

    def remove_broker_channel(self, broker_id: int) -> None:
        w, b = self.w, self.b
        proc = w.procs[b]
        if broker_id not in proc.forgotten:  # the channel manager forgets the broker
            w.procs[b] = proc._replace(forgotten=tuple(sorted((*proc.forgotten, broker_id))))
        lost = w.ch_call(Channels.stop_sender, b, broker_id)
        if lost:
            self.lines.append(f"c{b} remove channel to b{broker_id} ({lost} queued requests "
                              f"dropped; the one in flight may still arrive)")

    def start_timer(self, effect: StartTimer) -> None:
        self.w.timers.add((self.b, "c", effect.kind.value))

    def cancel_timer(self, effect: CancelTimer) -> None:
        self.w.timers.discard((self.b, "c", effect.kind.value))

    def became_controller(self, epoch: int) -> None:
        self.lines.append(f"c{self.b} became controller epoch={epoch}")

    def resigned(self, reason: str) -> None:
        from model_check.world.executor import resign

        self.lines.append(f"c{self.b} resigned: {reason}")
        resign(self.w, self.b, self.lines)

    def release_controller(self) -> None:
        from model_check.world.executor import release_controller

        release_controller(self.w, self.b, self.lines)


def driver_for(w: World, b: int, lines: list[str], awaiting: int | None = None
               ) -> ControllerDriver:
    """The driver of controller candidate ``b`` for one step of ``w``; ``awaiting``: the
    token of its pending write (``do_commit``)."""
    port = WorldControllerPort(w, b, lines)
    return ControllerDriver(port.step, port, awaiting)


def _d(w: World) -> object:
    """The describer for ``w``'s lines: ``describe``, or its quiet stand-in."""
    return D if w.describing else D.Quiet


_MAY_ACCEPT_REASSIGNMENTS = (ReassignmentRequest, ClusterLoaded)
"""The events with which a controller takes reassignments in flight (a request, a failover
resuming ``/admin/reassign_partitions``)."""


def _record_accepted(w: World, ctl: object) -> None:
    """Remember the reassignments the controller holds in flight (the world's record of what
    was *accepted*, as opposed to refused: a refused entry never enters the controller's
    in-flight set, it is only removed from ``/admin/reassign_partitions``)."""
    for tp, target in ctl.reassignments().items():  # type: ignore[attr-defined]
        if w.accepted.get(tp) != target:
            w.accepted[tp] = target


def materialize(w: World, b: int, item: Marker) -> object | None:
    """A queued marker -> the event handed to the controller (None: nothing to hand), read by
    ``fsm.reads.materialize`` (the live service's reader) over the world's ZooKeeper."""
    row = MARKERS[item.kind]
    active = not row.controller_only or w.controller_facts(b).active
    known = _NO_TOPICS
    if row.reads_topics and active:
        known = w.controllers[b].topic_names()  # type: ignore[attr-defined]
    return w.zk_read(R.materialize, item, active, known, w.procs[b].controller_session)


_NO_TOPICS: frozenset[str] = frozenset()
