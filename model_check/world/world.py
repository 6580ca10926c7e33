"""The deterministic simulated world: ZooKeeper, channels, broker processes, a scheduler.

Each broker process hosts a ``BrokerCore`` and a ``Controller`` candidate, each with its
own ZooKeeper session. The world plays the adapters' role (``executor.py``): it turns
watch notifications into controller events by reading the in-memory ZooKeeper, commits
``ZkWrite``s fenced by ``/controller_epoch``'s version, carries requests on channels.

The scheduler takes an explicit choice: ``enabled_actions()`` lists every action in a
deterministic order, ``apply(action)`` performs one and returns one-line descriptions of
what happened. ``snapshot()``/``World.restore(snap, config)`` are canonical.
"""

from __future__ import annotations

from fsm import zk_paths as P
from fsm.events import TimerKind
from fsm.znodes import ControllerEpochZnode
from model_check.world import actions as A
from model_check.world import executor as X
from model_check.world.channels import Channels
from model_check.world.config import WorldConfig
from model_check.world.cores import (
    broker_state_name,
    new_broker,
    new_controller,
    restore_broker,
    restore_controller,
)
from model_check.world.state import Marker, PendingWrite, Proc
from model_check.world.zookeeper import ZooKeeper

PERIODIC_TIMERS = frozenset({TimerKind.AUTO_REBALANCE.value})
"""Timers that re-arm forever: they do not keep a world from being quiescent."""


class World:
    def __init__(self, config: WorldConfig) -> None:
        self.config = config
        self.zk = ZooKeeper()
        for path in P.PERSISTENT_PATHS:
            self.zk.ensure_path(path)
        self.zk.create(P.CONTROLLER_EPOCH, ControllerEpochZnode(0))
        self.channels = Channels(config.channel_bound)
        ids = config.broker_ids
        self.controllers = {b: new_controller(config, b) for b in ids}
        self.brokers = {b: new_broker(config, b) for b in ids}
        self.procs: dict[int, Proc] = {b: Proc() for b in ids}
        self.queues: dict[int, tuple[object, ...]] = {b: () for b in ids}
        self.writes: dict[int, PendingWrite] = {}
        self.timers: set[tuple[int, str, str]] = set()  # (broker, "c"|"b", kind value)
        self.used: dict[str, int] = {}
        self.admin_done: set[int] = set()

    # ------------------------------------------------------------ snapshot

    def snapshot(self) -> tuple:
        ids = self.config.broker_ids
        return (
            self.zk.snapshot(),
            self.channels.snapshot(),
            tuple(self.controllers[b].snapshot() for b in ids),
            tuple(self.brokers[b].snapshot() for b in ids),
            tuple(self.procs[b] for b in ids),
            tuple(self.queues[b] for b in ids),
            tuple(sorted(self.writes.items())),
            tuple(sorted(self.timers)),
            tuple(sorted(self.used.items())),
            tuple(sorted(self.admin_done)),
        )

    @classmethod
    def restore(cls, snap: tuple, config: WorldConfig) -> World:
        w = cls.__new__(cls)
        (zk, ch, ctls, brks, procs, queues, writes, timers, used, admin) = snap
        w.config = config
        w.zk = ZooKeeper.restore(zk)
        w.channels = Channels.restore(ch, config.channel_bound)
        ids = config.broker_ids
        w.controllers = {b: restore_controller(s, config, b) for b, s in zip(ids, ctls, strict=True)}
        w.brokers = {b: restore_broker(s, config, b) for b, s in zip(ids, brks, strict=True)}
        w.procs = dict(zip(ids, procs, strict=True))
        w.queues = dict(zip(ids, queues, strict=True))
        w.writes = dict(writes)
        w.timers = set(timers)
        w.used = dict(used)
        w.admin_done = set(admin)
        return w

    # ------------------------------------------------------------ budgets

    def left(self, kind: str) -> int:
        return self.config.budget(kind) - self.used.get(kind, 0)

    def spend(self, kind: str) -> None:
        assert self.left(kind) > 0, f"no budget left for {kind}"
        self.used[kind] = self.used.get(kind, 0) + 1

    # ------------------------------------------------------------ scheduler

    def enabled_actions(self) -> list[A.Action]:
        out: list[A.Action] = []
        ids = self.config.broker_ids
        for b in ids:
            if b in self.writes:
                out.append(A.Action(A.COMMIT, b))
        for b in ids:
            if self.queues[b] and b not in self.writes and self.procs[b].up:
                out.append(A.Action(A.PROCESS, b))
        for b in ids:
            cs = self.procs[b].controller_session
            n = self.zk.next_notification(cs) if cs else None
            if n is not None:
                out.append(A.Action(A.NOTIFY, b, n.path))
        for key in self.channels.nonempty():
            if self.procs[key.dst].up:
                out.append(A.Action(A.DELIVER, key.src, key))
        for b in ids:
            if self.procs[b].session_lost:
                out.append(A.Action(A.SESSION_LOST, b))
        for b in ids:
            if not self.procs[b].started:
                out.append(A.Action(A.START, b))
        for b, role, kind in sorted(self.timers):
            out.append(A.Action(A.TIMER, b, (role, TimerKind(kind))))
        if self.left(A.ISR_CHANGE) > 0:
            out.extend(X.isr_change_choices(self))
        for i, op in enumerate(self.config.admin):
            if i not in self.admin_done and X.admin_enabled(self, op):
                out.append(A.Action(A.ADMIN, 0, i))
        out.extend(self._fault_actions())
        return out

    def _fault_actions(self) -> list[A.Action]:
        out: list[A.Action] = []
        ids = self.config.broker_ids
        if self.left(A.CRASH) > 0:
            out += [A.Action(A.CRASH, b) for b in ids if self.procs[b].up]
        if self.left(A.RESTART) > 0:
            out += [A.Action(A.RESTART, b) for b in ids
                    if self.procs[b].started and not self.procs[b].up]
        if self.left(A.EXPIRE_BROKER) > 0:
            out += [A.Action(A.EXPIRE_BROKER, b) for b in ids
                    if self.procs[b].up and not self.procs[b].session_lost
                    and self.zk.alive(self.procs[b].broker_session)
                    and self.zk.get(P.broker(b)) is not None]
        if self.left(A.EXPIRE_CONTROLLER) > 0:
            out += [A.Action(A.EXPIRE_CONTROLLER, b) for b in ids
                    if self.procs[b].up and (self.controllers[b].is_active or b in self.writes)]
        if self.left(A.DROP) > 0:
            pairs = sorted({tuple(sorted((k.src, k.dst))) for k in self.channels.nonempty()})
            out += [A.Action(A.DROP, a, b) for a, b in pairs]
        return out

    def apply(self, action: A.Action) -> list[str]:
        handler = X.HANDLERS[action.kind]
        if action.kind in (A.CRASH, A.RESTART, A.EXPIRE_BROKER, A.EXPIRE_CONTROLLER, A.DROP,
                           A.ISR_CHANGE):
            self.spend(action.kind)
        return handler(self, action)

    # ------------------------------------------------------------ queries

    def is_quiescent(self) -> bool:
        """Nothing left that matters: no message, notification, queued event, pending write,
        unnoticed session expiry or non-periodic timer."""
        if self.zk.pending or self.writes:
            return False
        if any(self.procs[k.dst].up for k in self.channels.nonempty()):
            return False
        if any(self.queues[b] for b in self.config.broker_ids if self.procs[b].up):
            return False
        if any(p.session_lost for p in self.procs.values()):
            return False
        return not any(self.timer_matters(t) for t in self.timers)

    def timer_matters(self, timer: tuple[int, str, str]) -> bool:
        """A pending timer that can still change something: every broker timer, the
        deletion retry while its controller has topics queued for deletion."""
        b, role, kind = timer
        if role == "b":
            return True
        if kind == TimerKind.DELETION_RETRY.value:
            return bool(self.controllers[b].topics_to_delete())
        return kind not in PERIODIC_TIMERS

    def active_controller(self) -> int | None:
        """Who ``/controller`` names."""
        from model_check.world.reads import active_controller

        return active_controller(self.zk)

    def broker_states(self) -> dict[int, str]:
        return {b: broker_state_name(self.brokers[b]) for b in self.config.broker_ids}

    def enqueue(self, b: int, item: object, front: bool = False) -> None:
        q = self.queues[b]
        assert len(q) < self.config.queue_bound, f"controller {b}'s queue is over its bound"
        self.queues[b] = (item,) + q if front else q + (item,)

    def markers_of(self, b: int) -> list[Marker]:
        return [m for m in self.queues[b] if isinstance(m, Marker)]
