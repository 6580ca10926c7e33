"""``BrokerCore``: what one broker does, without I/O (``handle(event) -> list[BrokerEffect]``).

State (all of it in ``snapshot()``; per-entity values immutable, containers one level deep):

* the lifecycle state (broker-session table), the broker epoch (czxid of its registration,
  None when not registered), the highest controller epoch applied;
* local replicas: ``{tp: ReplicaView}``;
* the metadata cache (``metadata_cache.MetadataCache``);
* its own ZooKeeper writes in flight: ``{token: PendingWrite}``;
* controlled shutdown: attempts made, whether SIGTERM was received, whether ``Register``
  is awaiting its ``BrokerRegistered``;
* the applied mark (``AppliedMark``): the last request applied in this incarnation.

Not in the snapshot: ``state_change_log`` (drained by the adapters) and ``applied_log``
(bounded). The snapshot holds builtins only (``snapshot_codec``) and is cached until the
next ``handle``. Modules: ``lifecycle`` (table moves), ``recovery`` (seed 001 E),
``commands`` (controller requests), ``epoch_fencing``, ``replicas`` (become leader /
follower, stop), ``metadata_cache``, ``isr`` (ISR changes by the leader), ``validation``
(bad input), ``views`` (the immutable per-entity values), ``config``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from fsm.broker import commands, isr, lifecycle
from fsm.broker.config import BrokerConfig
from fsm.broker.metadata_cache import MetadataCache, MetadataView, TopicMetadata
from fsm.broker.snapshot_codec import (
    STATE_BY_VALUE,
    decode_applied,
    decode_pending,
    decode_replica,
    encode_applied,
    encode_pending,
    encode_replica,
)
from fsm.broker.views import (
    AppliedMark,
    AppliedRecord,
    BrokerLogRecord,
    CommitView,
    PendingWrite,
    ReplicaRole,
    ReplicaView,
)
from fsm.broker_states import BROKER_TABLE, BrokerState, broker_label
from fsm.effects import BrokerEffect
from fsm.events import (
    BrokerCrashed,
    BrokerMetadataLoaded,
    BrokerRegistered,
    BrokerSessionExpired,
    BrokerStarted,
    BrokerWriteResult,
    ControlledShutdownAnswered,
    IsrChangeWanted,
    RequestReceived,
    ShutdownRequested,
    TimerFired,
)
from fsm.values import TopicPartition

_SERVING = frozenset({BrokerState.RUNNING, BrokerState.PENDING_CONTROLLED_SHUTDOWN})

_DISPATCH: dict[type, Callable[[BrokerCore, Any], list[BrokerEffect]]] = {
    RequestReceived: commands.handle_request,
    IsrChangeWanted: isr.want_isr_change,
    BrokerWriteResult: isr.write_result,
    BrokerStarted: lambda core, ev: lifecycle.started(core),
    BrokerMetadataLoaded: lifecycle.metadata_loaded,
    BrokerRegistered: lifecycle.registered,
    ShutdownRequested: lifecycle.shutdown_requested,
    ControlledShutdownAnswered: lifecycle.controlled_shutdown_answered,
    BrokerSessionExpired: lifecycle.session_expired,
    BrokerCrashed: lambda core, ev: lifecycle.crashed(core),
    TimerFired: lifecycle.timer_fired,
}

HANDLED_EVENTS: tuple[str, ...] = tuple(t.__name__ for t in _DISPATCH)
"""The events a broker core handles (each by its own function)."""

BrokerSnapshot = tuple  # the layout: snapshot_codec.BrokerSnapshotFields


class BrokerCore:
    __slots__ = (
        "config", "_label", "_state", "_epoch", "_controller_epoch", "_replicas", "_cache",
        "_pending", "_cs_attempts", "_shutdown_wanted", "_registering", "_applied",
        "_log", "_applied_log", "_snap",
    )

    def __init__(self, config: BrokerConfig) -> None:
        self.config = config
        self._label = broker_label(config.broker_id)
        self._state = BROKER_TABLE.initial
        self._log: list[BrokerLogRecord] = []
        self._applied_log: deque[AppliedRecord] = deque(maxlen=max(1, config.applied_log_size))
        self._snap: BrokerSnapshot | None = None
        self._forget_everything()

    def _forget_everything(self) -> None:
        """What a crash leaves: nothing (the lifecycle state is set by the caller)."""
        self._epoch: int | None = None
        self._controller_epoch = 0
        self._replicas: dict[TopicPartition, ReplicaView] = {}
        self._cache = MetadataCache()
        self._pending: dict[int, PendingWrite] = {}
        self._cs_attempts = 0
        self._shutdown_wanted = False
        self._registering = False
        self._applied: AppliedMark | None = None

    # ------------------------------------------------------------------ events

    def handle(self, event: object) -> list[BrokerEffect]:
        """React to one event; never raises on an event value the outside can build."""
        self._snap = None  # any event may change the state: the cached snapshot is stale
        handler = _DISPATCH.get(type(event))
        if handler is None:
            self._record("rejected", self._label, f"unknown event {type(event).__name__}")
            return []
        return handler(self, event)

    # ------------------------------------------------------------------ helpers for modules

    def _move(self, target: BrokerState) -> None:
        previous = self._state
        self._state = BROKER_TABLE.check(self._label, previous, target)
        self._record("transition", self._label, f"{previous.value} -> {target.value}")

    def _record(self, kind: str, entity: str, detail: str) -> None:
        self._log.append(BrokerLogRecord(kind, entity, detail))

    def _ignore(self, what: str) -> list[BrokerEffect]:
        self._record("ignored", self._label, f"{what} in {self._state.value}")
        return []

    # ------------------------------------------------------------------ queries

    @property
    def broker_id(self) -> int:
        return self.config.broker_id

    @property
    def state(self) -> BrokerState:
        return self._state

    @property
    def epoch(self) -> int | None:
        """The broker epoch (czxid of its registration); None when not registered."""
        return self._epoch

    @property
    def controller_epoch(self) -> int:
        """The highest controller epoch of a request applied (0 before any)."""
        return self._controller_epoch

    @property
    def controller_id(self) -> int | None:
        """The controller named by the last UpdateMetadata applied."""
        return self._cache.controller_id

    @property
    def is_serving(self) -> bool:
        """Takes controller requests: RUNNING or PENDING_CONTROLLED_SHUTDOWN."""
        return self._state in _SERVING

    def replica(self, tp: TopicPartition) -> ReplicaView | None:
        return self._replicas.get(tp)

    def replicas(self) -> tuple[tuple[TopicPartition, ReplicaView], ...]:
        return tuple(sorted(self._replicas.items()))

    def believes_leader(self, tp: TopicPartition) -> bool:
        """It leads ``tp`` and no ISR write of its own has failed since it was told so."""
        view = self._replicas.get(tp)
        return view is not None and view.role is ReplicaRole.LEADER and not view.fenced

    def can_commit_view(self, tp: TopicPartition) -> CommitView | None:
        """This broker's claim to commit on ``tp`` (None: it cannot). A commit also needs
        every other ISR member to follow it; the invariants combine all brokers' views."""
        if not self.believes_leader(tp):
            return None
        view = self._replicas[tp]
        return CommitView(self.config.broker_id, view.leader_epoch, view.isr, view.zk_version)

    @property
    def metadata_cache(self) -> MetadataView:
        return self._cache.view()

    def topic_metadata(self, topics: Iterable[str] | None = None) -> tuple[TopicMetadata, ...]:
        """The topics part of a MetadataRequest answer (None: all topics)."""
        return self._cache.topic_metadata(topics)

    @property
    def pending_writes(self) -> tuple[tuple[int, PendingWrite], ...]:
        return tuple(sorted(self._pending.items()))

    @property
    def shutdown_attempts(self) -> int:
        """ControlledShutdown requests sent in the current PENDING_CONTROLLED_SHUTDOWN."""
        return self._cs_attempts

    @property
    def applied(self) -> AppliedMark | None:
        """The last controller request applied in this incarnation (in the snapshot)."""
        return self._applied

    def applied_ok(self) -> bool:
        """The per-broker invariant on ``applied``: the last applied request was for this
        incarnation and not from a controller older than one applied before it."""
        mark = self._applied
        return mark is None or (mark.broker_epoch == self._epoch
                                and mark.controller_epoch >= mark.highest_before)

    @property
    def applied_log(self) -> tuple[AppliedRecord, ...]:
        return tuple(self._applied_log)

    @property
    def state_change_log(self) -> list[BrokerLogRecord]:
        return self._log

    def drain_log(self) -> list[BrokerLogRecord]:
        log, self._log = self._log, []
        return log

    # ------------------------------------------------------------------ snapshots

    def snapshot(self) -> BrokerSnapshot:
        """Canonical, immutable and builtins-only (``snapshot_codec``): ``(state, epoch,
        controller_epoch, replicas, cache, pending, cs_attempts, shutdown_wanted,
        registering, applied)`` -- named field by field by ``snapshot_codec.BrokerSnapshotFields``
        --, every dict as a tuple of ``(key, encoded value)`` sorted by key. Pickle it with ``Pickler.fast = True`` for a fingerprint: the memo would make
        the bytes depend on which equal objects happen to be shared.

        Cached until the next ``handle`` (a restored core that handles nothing gives back its
        snapshot for free: most components of a world are untouched by one step)."""
        if self._snap is None:
            self._snap = self._encode()
        return self._snap

    def _encode(self) -> BrokerSnapshot:
        """The snapshot, computed afresh (``snapshot`` caches it)."""
        return (
            self._state.value,
            self._epoch,
            self._controller_epoch,
            tuple(sorted((tp, encode_replica(v)) for tp, v in self._replicas.items())),
            self._cache.snapshot(),
            tuple(sorted((t, encode_pending(w)) for t, w in self._pending.items())),
            self._cs_attempts,
            self._shutdown_wanted,
            self._registering,
            encode_applied(self._applied),
        )

    @classmethod
    def restore(cls, snap: BrokerSnapshot, config: BrokerConfig) -> BrokerCore:
        core = cls.__new__(cls)
        core.config = config
        core._label = broker_label(config.broker_id)
        core._log = []
        core._applied_log = deque(maxlen=max(1, config.applied_log_size))
        (state, core._epoch, core._controller_epoch, replicas, cache, pending,
         core._cs_attempts, core._shutdown_wanted, core._registering, applied) = snap
        core._state = STATE_BY_VALUE[state]
        core._replicas = {tp: decode_replica(v) for tp, v in replicas}
        core._cache = MetadataCache.restore(cache)
        core._pending = {t: decode_pending(w) for t, w in pending}
        core._applied = decode_applied(applied)
        core._snap = snap
        return core

    def __repr__(self) -> str:
        return (f"BrokerCore({self.config.broker_id}, {self._state.value}, epoch={self._epoch}, "
                f"controller_epoch={self._controller_epoch}, replicas={len(self._replicas)})")
