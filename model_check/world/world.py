"""The deterministic simulated world: ZooKeeper, channels, broker processes, a scheduler.

Each broker process hosts a ``BrokerCore`` and a ``Controller`` candidate, each with its
own ZooKeeper session. The world plays the adapters' role (``executor.py``): it turns
watch notifications into controller events by reading the in-memory ZooKeeper, commits
``ZkWrite``s fenced by ``/controller_epoch``'s version, carries requests on channels.

The scheduler takes an explicit choice: ``enabled_actions()`` lists every action in a
deterministic order, ``apply(action)`` performs one and returns one-line descriptions of
what happened. ``snapshot()``/``World.restore(snap, config)`` are canonical.

Snapshots (builtins only) are a flat tuple of components: ``(zk, channels, controller 1..n,
broker core 1..n, rest)`` (``world_layout(n)`` says where each is) where ``rest`` is
``(procs, queues, writes, timers, used, admin, accepted)`` (``RestSnapshotFields``;
``accepted``: the reassignments a controller took in flight, which the invariants judge once
they are no longer pending). The components' own layouts are named next to their producers:
``ZooKeeperSnapshotFields``, ``fsm.controller.snapshot_fields``,
``fsm.broker.snapshot_codec`` (``fsm.snapshot_fields``).
Each component caches its snapshot until something changes it (ZooKeeper, channels and
broker cores drop their own cache; the world drops a controller's when it hands it an
event -- ``World.controller_handle`` -- or replaces it), so a step re-encodes only what
it touched, and ``fingerprint`` reuses the digests of the untouched components.

Restore is copy-on-write: ``World.restore`` keeps the component snapshots and builds the
ZooKeeper, channels, a controller or a broker core only when something first reads it
(``zk``/``channels`` properties; ``controllers``/``brokers`` are ``LazyCores`` dicts that
restore an entry on first access). Until then ``snapshot()`` hands back the very same
component tuples, and the scheduler answers ``enabled_actions()`` from them where it can
(pending notifications, live sessions).

Memos: what a search remembers across its worlds is not the world's. The search hands every
world it runs its ``model_check.memo.Memos`` (``World(config, memos)``,
``World.restore(snap, config, memos)``), and the world calls through it -- the cores' steps
(``controller_handle``, ``broker_handle``), ZooKeeper and channel calls (``zk_call``,
``zk_read``, ``ch_call``, ``ch_send``: the function to call is passed, a ``ZooKeeper`` or
``Channels`` method), the components' facts, the restore template, the codec of its
snapshots (``codec``, which its ZooKeeper and channels use too). A ZooKeeper or channel call
served by the memo answers with the snapshot the call left, and the world takes it itself
(``zk_call``...); a core's step is handed back through the world's public methods
(``controller_becomes``, ``broker_becomes``, ``cache_controller_snapshot``). Without memos (a
replay, a test driving a world by hand) everything runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

from fsm import zk_paths as P
from fsm.controller.snapshot_fields import CONTROLLER
from fsm.events import TimerKind
from fsm.snapshot_fields import positions
from fsm.zk_session_states import ZkClientState
from fsm.znodes import ControllerEpochZnode
from model_check.world import actions as A
from model_check.world import executor as X
from model_check.world.channels import ChannelKey, Channels, pairs_of
from model_check.world.channels import shared as channels_shared
from model_check.world.codec import PLAIN, Codec
from model_check.world.config import WorldConfig
from model_check.world.cores import (
    fresh_controller_snapshot,
    new_broker,
    new_controller,
    restore_broker,
    restore_controller,
    shared_snapshot,
)
from model_check.world.facts import BrokerFacts, ControllerFacts, broker_facts, controller_facts
from model_check.world.fingerprint import Shared
from model_check.world.state import Marker, PendingWrite, Proc
from model_check.world.zookeeper import ZOOKEEPER, Notification, ZooKeeper, snapshot_has
from model_check.world.zookeeper import shared as zk_shared

if TYPE_CHECKING:
    from model_check.memo import Memos

_CONNECTING = ZkClientState.CONNECTING.value
_SESSION = CONTROLLER.session  # the controller's ZkClientState in its snapshot


class WorldLayout(NamedTuple):
    """Where the components of a world snapshot are, for ``n`` brokers (``world_layout``):
    ``(zk, channels, controller 1..n, broker core 1..n, rest)``, the cores in broker id
    order (``config.broker_ids``): controller ``ids[i]`` is ``snap[layout.controllers][i]``."""

    zookeeper: int  # ``ZooKeeperSnapshotFields``
    channels: int  # ``((encoded ChannelKey, encoded queue), ...)``, sorted
    controllers: slice  # ``fsm.controller.snapshot_fields.ControllerSnapshotFields`` each
    brokers: slice  # ``fsm.broker.snapshot_codec.BrokerSnapshotFields`` each
    rest: int  # ``RestSnapshotFields``
    size: int  # how many components


_LAYOUTS: dict[int, WorldLayout] = {}
"""One ``WorldLayout`` per broker count: a constant of the code (a few small values, made
once), not a memo of the search."""


def world_layout(n: int) -> WorldLayout:
    """The layout of the snapshot of a world of ``n`` brokers."""
    layout = _LAYOUTS.get(n)
    if layout is None:
        layout = _LAYOUTS[n] = WorldLayout(0, 1, slice(2, 2 + n), slice(2 + n, 2 + 2 * n),
                                           2 + 2 * n, 3 + 2 * n)
    return layout


ZOOKEEPER_AT, CHANNELS_AT = world_layout(0)[:2]
"""The places of ZooKeeper and the channels, whatever the broker count."""


class RestSnapshotFields(NamedTuple):
    """The world's own component of its snapshot (``World._rest_snapshot``), field by field
    (a field list: the snapshot stays a plain tuple)."""

    procs: tuple  # ``tuple(Proc)`` of each broker process, by broker id: ``PROC``
    queues: tuple  # each controller's event queue, encoded, by broker id
    writes: tuple  # encoded ``(broker, PendingWrite)``, sorted
    timers: tuple  # ``TimerFields``, sorted
    used: tuple  # ``(budget kind, spent)``, sorted
    admin: tuple[int, ...]  # the admin actions performed (their indices), sorted
    accepted: tuple  # ``(tp, target)``: the reassignments a controller took in flight


class TimerFields(NamedTuple):
    """A running timer in ``RestSnapshotFields.timers``."""

    broker: int
    role: str  # "c": the controller's, "b": the broker core's
    kind: str  # the ``TimerKind`` value


REST = positions(RestSnapshotFields)
PROC = positions(Proc)
"""Positions in a process's entry of ``RestSnapshotFields.procs`` (``tuple(Proc)``)."""
TIMER = positions(TimerFields)

PERIODIC_TIMERS = frozenset({TimerKind.AUTO_REBALANCE.value})
"""Timers that re-arm forever: they do not keep a world from being quiescent."""


def restorers(config: WorldConfig) -> tuple[Callable, Callable]:
    """``(snap, b) -> Controller`` and ``(snap, b) -> BrokerCore`` for ``config``. They close
    over the config, not the world: a world holding a bound method of itself would be a
    reference cycle, and every restored world would then wait for the cyclic garbage
    collector instead of being freed when dropped."""

    def make_c(snap: tuple, b: int) -> object:
        return restore_controller(snap, config, b)

    def make_b(snap: tuple, b: int) -> object:
        return restore_broker(snap, config, b)

    return make_c, make_b


_shared_rest = Shared()
"""The ``rest`` component, one object per value (``fingerprint.Shared``): many worlds have
the same processes, queues and budgets. An intern table, not a memo of the search
(``fingerprint.Shared``)."""


def _share(part: tuple, shared: Shared) -> tuple:
    return shared(part)  # type: ignore[return-value]


class RestBase(NamedTuple):
    """A ``rest`` snapshot and its fields decoded (never changed: worlds copy them)."""

    snap: tuple
    procs: dict[int, Proc]
    queues: dict[int, tuple[object, ...]]
    writes: dict[int, PendingWrite]
    timers: set[tuple[int, str, str]]
    used: dict[str, int]
    admin: set[int]
    accepted: dict[tuple[str, int], tuple[int, ...]]


def decode_rest(rest: tuple, ids: tuple[int, ...], codec: Codec = PLAIN) -> RestBase:
    """``rest`` decoded, its fields by broker id where they are per broker."""
    decode = codec.decode
    procs, queues, writes, timers, used, admin, accepted = rest
    return RestBase(rest,
                    dict(zip(ids, [tuple.__new__(Proc, p) for p in procs], strict=False)),
                    dict(zip(ids, decode(queues), strict=False)),
                    dict(decode(writes)), set(timers), dict(used), set(admin),
                    dict(accepted))


class Template(NamedTuple):
    """What ``World.restore`` copies for a snapshot (never changed: worlds copy it)."""

    ids: tuple[int, ...]  # ``config.broker_ids``
    controllers: dict[int, tuple]  # the controllers' snapshots by broker id
    brokers: dict[int, tuple]  # the broker cores' snapshots by broker id
    rest: RestBase
    make_controller: Callable  # ``restorers(config)``
    make_broker: Callable


def template(snap: tuple, ids: tuple[int, ...],
             rest: Callable[[tuple, tuple[int, ...]], RestBase],
             makers: tuple[Callable, Callable]) -> Template:
    """The ``Template`` of ``snap``, its ``rest`` decoded by ``rest`` (``decode_rest``, or
    a memo of it)."""
    layout = world_layout(len(ids))
    assert len(snap) == layout.size, "a snapshot of a world with another broker count"
    return Template(ids, dict(zip(ids, snap[layout.controllers], strict=False)),
                    dict(zip(ids, snap[layout.brokers], strict=False)),
                    rest(snap[layout.rest], ids), *makers)


def _encoded_queues(queues: dict[int, tuple], ids: tuple[int, ...],
                    base: RestBase | None, encode: Callable[[Any], Any] = PLAIN.encode) -> tuple:
    """The ``queues`` field of ``rest``: a broker's queue that is the restored one keeps the
    restored encoding (a step changes one queue at most)."""
    if base is None:
        return tuple([encode(q) if (q := queues[b]) else () for b in ids])
    was, old = base.queues, base.snap[REST.queues]
    return tuple([old[i] if (q := queues[b]) is was[b]
                  else _encode_queue(q, was[b], old[i], encode) for i, b in enumerate(ids)])


def _encode_queue(q: tuple, was: tuple, old: tuple,
                  encode: Callable[[Any], Any] = PLAIN.encode) -> tuple:
    """``encode(q)`` where ``old`` is ``encode(was)``: a step takes the head off a queue or
    puts one event at either end, and the rest keeps its encoding."""
    if not q:
        return ()
    n = len(q) - len(was)
    if n == -1 and q == was[1:]:
        return old[1:]
    if n == 1:
        if q[:-1] == was:
            return (*old, encode(q[-1]))
        if q[1:] == was:
            return (encode(q[0]), *old)
    return encode(q)


class LazyCores(dict):
    """broker id -> ``Controller``/``BrokerCore``; an absent id is restored from ``snaps``
    on first access (``w.controllers[b]``). Assigning an entry drops its snapshot in
    ``snaps`` (the new object is the truth). Iteration materialises every entry."""

    __slots__ = ("_make", "_snaps")

    @classmethod
    def over(cls, make: Callable[[tuple, int], object], snaps: dict[int, tuple]) -> LazyCores:
        lc = cls()
        lc._make = make
        lc._snaps = snaps
        return lc

    def __missing__(self, b: int) -> object:
        obj = self._make(self._snaps[b], b)
        dict.__setitem__(self, b, obj)
        return obj

    def __setitem__(self, b: int, obj: object) -> None:
        self._snaps.pop(b, None)
        dict.__setitem__(self, b, obj)

    def loaded(self, b: int) -> object | None:
        """The entry if it is materialised (never restores)."""
        return dict.get(self, b)

    def _all(self) -> None:
        for b in sorted(self._snaps):
            if not dict.__contains__(self, b):
                self.__missing__(b)

    def __contains__(self, b: object) -> bool:
        return dict.__contains__(self, b) or b in self._snaps

    def __len__(self) -> int:
        self._all()
        return dict.__len__(self)

    def __iter__(self) -> Iterator[int]:
        self._all()
        return dict.__iter__(self)

    def get(self, b: int, default: object = None) -> object:  # type: ignore[override]
        if b not in self:
            return default
        return self[b]

    def keys(self):  # type: ignore[no-untyped-def]
        self._all()
        return dict.keys(self)

    def values(self):  # type: ignore[no-untyped-def]
        self._all()
        return dict.values(self)

    def items(self):  # type: ignore[no-untyped-def]
        self._all()
        return dict.items(self)


_lazy = dict.__new__
"""``LazyCores()`` without the type call's ``__init__`` (``restore`` sets the slots)."""


class World:
    def __init__(self, config: WorldConfig, memos: Memos | None = None) -> None:
        """A fresh world of ``config``. ``memos``: what the search that runs it memoises
        (``model_check.memo``; the search gives it to every world it restores), None to
        run everything."""
        self.config = config
        self.memos = memos
        self.codec = codec = PLAIN if memos is None else memos.codec
        """How the world's snapshots encode and decode (the memos', or ``codec.PLAIN``)."""
        self._zk: ZooKeeper | None = ZooKeeper(codec)
        self._zk_snap: tuple = ()
        for path in P.PERSISTENT_PATHS:
            self.zk.ensure_path(path)
        self.zk.create(P.CONTROLLER_EPOCH, ControllerEpochZnode(0))
        self._channels: Channels | None = Channels(config.channel_bound, codec)
        self._ch_snap: tuple = ()
        self.ids = ids = config.broker_ids if memos is None else memos.templates.ids
        """``config.broker_ids``."""
        self._csnap: dict[int, tuple] = {}
        self._bsnap: dict[int, tuple] = {}
        make_c, make_b = restorers(config) if memos is None else memos.templates.makers
        self.controllers = LazyCores.over(make_c, self._csnap)
        self.brokers = LazyCores.over(make_b, self._bsnap)
        for b in ids:
            self.controllers[b] = new_controller(config, b)
            self.brokers[b] = new_broker(config, b)
        self.procs: dict[int, Proc] = {b: Proc() for b in ids}
        self.queues: dict[int, tuple[object, ...]] = {b: () for b in ids}
        self.writes: dict[int, PendingWrite] = {}
        self.timers: set[tuple[int, str, str]] = set()  # (broker, "c"|"b", kind value)
        self.used: dict[str, int] = {}
        self.admin_done: set[int] = set()
        self.accepted: dict[tuple[str, int], tuple[int, ...]] = {}
        """Reassignments a controller took in flight: partition -> target (the latest)."""
        self._rest: RestBase | None = None  # the restored ``rest`` and its decoded fields

    # ------------------------------------------------------------ snapshot

    def snapshot(self) -> tuple:
        ids = self.ids
        zk = self._zk
        ch = self._channels
        out = [zk.snapshot() if zk is not None else self._zk_snap,
               ch.snapshot() if ch is not None else self._ch_snap]
        csnap = self._csnap
        for b in ids:
            s = csnap.get(b)
            if s is None:
                s = csnap[b] = self.controllers[b].snapshot()
            out.append(s)
        brokers, bsnap = self.brokers, self._bsnap
        for b in ids:
            core = dict.get(brokers, b)  # ``loaded``: never restores
            out.append(core.snapshot() if core is not None else bsnap[b])  # type: ignore[attr-defined]
        out.append(self._rest_snapshot(ids))
        return tuple(out)

    def _rest_snapshot(self, ids: tuple[int, ...]) -> tuple:
        """``(procs, queues, writes, timers, used, admin, accepted)``; a field equal to the
        restored one keeps the restored encoding (a step changes one or two of them), and
        the whole is the restored tuple when nothing changed."""
        procs, queues, writes = self.procs, self.queues, self.writes
        timers, used, admin, accepted = self.timers, self.used, self.admin_done, self.accepted
        base = self._rest
        if base is not None:
            old = base.snap
            same = (procs == base.procs, queues == base.queues, writes == base.writes,
                    timers == base.timers, used == base.used, admin == base.admin,
                    accepted == base.accepted)
            if all(same):
                return old
        else:
            old, same = (), (False,) * 7
        return _shared_rest((
            old[0] if same[0] else tuple([tuple(procs[b]) for b in ids]),
            old[1] if same[1] else _encoded_queues(queues, ids, base, self.codec.encode),
            old[2] if same[2] else self.codec.encode(tuple(sorted(writes.items())))
            if writes else (),
            old[3] if same[3] else tuple(sorted(timers)),
            old[4] if same[4] else tuple(sorted(used.items())),
            old[5] if same[5] else tuple(sorted(admin)),
            old[6] if same[6] else tuple(sorted(accepted.items())) if accepted else (),
        ))

    @staticmethod
    def canonical(snap: tuple, memos: Memos | None = None) -> tuple:
        """An equal snapshot whose components are this process's shared objects (the ones
        ``snapshot()`` and the step memo hand out): a state that arrives from elsewhere (a
        Spark bundle) is then known to the memos keyed by identity (``memos``: remember
        each component's by its identity too)."""
        share = _share if memos is None else memos.templates.share
        zk, ch, *cores, rest = snap  # world_layout: ZooKeeper, channels, the cores, rest
        return (share(zk, zk_shared), share(ch, channels_shared),
                *[share(c, shared_snapshot) for c in cores],
                share(rest, _shared_rest))

    @classmethod
    def restore(cls, snap: tuple, config: WorldConfig, memos: Memos | None = None) -> World:
        """The world of snapshot ``snap`` (``memos``: as for ``World``)."""
        w = cls.__new__(cls)
        w.config = config
        w.memos = memos
        w.codec = PLAIN if memos is None else memos.codec
        w._zk = None
        w._zk_snap = snap[ZOOKEEPER_AT]
        w._channels = None
        w._ch_snap = snap[CHANNELS_AT]
        if memos is None:
            t = template(snap, config.broker_ids, decode_rest, restorers(config))
        else:
            t = memos.templates.template(snap)
        w.ids, csnap, bsnap, base, make_c, make_b = t
        w._csnap = csnap = csnap.copy()
        w._bsnap = bsnap = bsnap.copy()
        w.controllers = lc = _lazy(LazyCores)
        lc._make, lc._snaps = make_c, csnap
        w.brokers = lb = _lazy(LazyCores)
        lb._make, lb._snaps = make_b, bsnap
        w._rest = base
        w.procs = base.procs.copy()
        w.queues = base.queues.copy()
        w.writes = base.writes.copy()
        w.timers = base.timers.copy()
        w.used = base.used.copy()
        w.admin_done = base.admin.copy()
        w.accepted = base.accepted.copy()
        return w

    @property
    def zk(self) -> ZooKeeper:
        zk = self._zk
        if zk is None:
            zk = self._zk = ZooKeeper.restore(self._zk_snap, self.codec)
        return zk

    @property
    def channels(self) -> Channels:
        ch = self._channels
        if ch is None:
            ch = self._channels = Channels.restore(self._ch_snap, self.config.channel_bound,
                                                   self.codec)
        return ch

    def zk_call(self, fn: Callable[..., Any], *args: object, **kwargs: object) -> Any:
        """``fn(self.zk, *args, **kwargs)`` (``fn`` a ``ZooKeeper`` method) for a call that
        may change ZooKeeper; with a memo, while ZooKeeper is not restored, the answer and
        the new snapshot may come from it (``StepMemo.zk_call``) without restoring it."""
        memos = self.memos
        if memos is None or self._zk is not None:
            return fn(self.zk, *args, **kwargs)
        result, snap = memos.steps.zk_call(self, self._zk_snap, fn, args, kwargs)
        if snap is not None:  # a hit: ZooKeeper, not restored, is what the call left
            self._zk_snap = snap
        return result

    def zk_read(self, reader: Callable[..., Any], *args: object) -> Any:
        """``reader(self.zk, *args)`` (``reads.py``), memoised like ``zk_call``."""
        memos = self.memos
        if memos is None or self._zk is not None:
            return reader(self.zk, *args)
        result, snap = memos.steps.zk_call(self, self._zk_snap, reader, args)
        if snap is not None:
            self._zk_snap = snap
        return result

    def ch_call(self, fn: Callable[..., Any], *args: object) -> Any:
        """``fn(self.channels, *args)`` (``fn`` a ``Channels`` method) for an operation that
        takes messages off the channels, memoised like ``zk_call`` (``StepMemo.ch_call``)."""
        memos = self.memos
        if memos is None or self._channels is not None:
            return fn(self.channels, *args)
        result, snap = memos.steps.ch_call(self, self._ch_snap, fn, args)
        if snap is not None:  # a hit: the channels, not restored, are what it left
            self._ch_snap = snap
        return result

    def ch_send(self, key: ChannelKey, message: object) -> None:
        """``self.channels.send(key, message)``, memoised like ``ch_call``
        (``StepMemo.ch_send``)."""
        memos = self.memos
        if memos is None or self._channels is not None:
            self.channels.send(key, message)
        else:
            snap = memos.steps.ch_send(self, self._ch_snap, key, message)
            if snap is not None:
                self._ch_snap = snap

    def controller_handle(self, b: int, event: object) -> Any:
        """``self.controllers[b].handle(event)``: the effects (with a memo, maybe the
        recorded ones of the same step: ``StepMemo.controller_step``)."""
        memos = self.memos
        if memos is None:
            ctl = self.controllers[b]  # restored first, from the snapshot about to go stale
            self.controller_changed(b)
            return ctl.handle(event)  # type: ignore[attr-defined]
        return memos.steps.controller_step(self, b, event, memos.coverage)

    def broker_handle(self, b: int, event: object) -> tuple[Any, Any, Any]:
        """``self.brokers[b].handle(event)``: ``(effects, state before, state after)``
        (with a memo, maybe the recorded ones: ``StepMemo.broker_step``)."""
        memos = self.memos
        if memos is not None:
            return memos.steps.broker_step(self, b, event, memos.coverage)
        core = self.brokers[b]
        before = core.state  # type: ignore[attr-defined]
        effects = core.handle(event)  # type: ignore[attr-defined]
        return effects, before, core.state  # type: ignore[attr-defined]

    def controller_facts(self, b: int) -> ControllerFacts:
        """Controller ``b``'s facts (``facts.py``; with a memo, once per distinct snapshot)."""
        memos = self.memos
        if memos is None:
            return controller_facts(self.controllers[b])  # type: ignore[arg-type]
        return memos.facts.controller(self, b)

    def broker_facts(self, b: int) -> BrokerFacts:
        """Broker core ``b``'s facts, as ``controller_facts``."""
        memos = self.memos
        if memos is None:
            return broker_facts(self.brokers[b])  # type: ignore[arg-type]
        return memos.facts.broker(self, b)

    def channel_keys(self) -> list[ChannelKey]:
        """The non-empty channels, sorted, read without restoring the channels."""
        ch = self._channels
        if ch is not None:
            return ch.nonempty()
        return sorted(pairs_of(self._ch_snap, self.codec))

    def zk_snapshot(self) -> tuple:
        """ZooKeeper's component snapshot (without restoring it)."""
        zk = self._zk
        return zk.snapshot() if zk is not None else self._zk_snap

    def channels_snapshot(self) -> tuple:
        """The channels' component snapshot (without restoring them)."""
        ch = self._channels
        return ch.snapshot() if ch is not None else self._ch_snap

    def controller_snapshot(self, b: int) -> tuple:
        """Controller ``b``'s component snapshot (without restoring it)."""
        s = self._csnap.get(b)
        if s is None:
            s = self._csnap[b] = self.controllers[b].snapshot()
        return s

    def broker_snapshot(self, b: int) -> tuple:
        """Broker core ``b``'s component snapshot (without restoring it)."""
        core = self.brokers.loaded(b)
        return core.snapshot() if core is not None else self._bsnap[b]  # type: ignore[attr-defined]

    def reset_controller(self, b: int) -> None:
        """Controller ``b`` starts afresh (its process started or died): a new candidate,
        kept as the fresh snapshot until something reads it."""
        memos = self.memos
        self.controller_becomes(b, fresh_controller_snapshot(self.config, b) if memos is None
                                else memos.templates.fresh_controller[b])

    def controller_becomes(self, b: int, snap: tuple) -> None:
        """Controller ``b`` is now ``snap`` (a fresh one, or what a memo recorded the same
        step to leave): restored from it only if something reads it."""
        dict.pop(self.controllers, b, None)
        self._csnap[b] = snap

    def broker_becomes(self, b: int, snap: tuple) -> None:
        """Broker core ``b`` is now ``snap``, as ``controller_becomes``."""
        dict.pop(self.brokers, b, None)
        self._bsnap[b] = snap

    def controller_changed(self, b: int) -> None:
        """Controller ``b`` is about to handle an event: its cached snapshot is stale."""
        self._csnap.pop(b, None)

    def cache_controller_snapshot(self, b: int, snap: tuple) -> None:
        """``snap`` is the snapshot of the restored controller ``b`` as it is now (an equal
        one, shared: ``cores.shared_snapshot``), kept until it next changes."""
        self._csnap[b] = snap

    def _pending(self) -> list[Notification] | tuple[Notification, ...]:
        zk = self._zk
        return zk.pending if zk is not None \
            else self.codec.decode(self._zk_snap[ZOOKEEPER.pending])

    def _next_notification(self, session: int) -> Notification | None:
        for n in self._pending():
            if n.session == session:
                return n
        return None

    def _registered(self, session: int, b: int) -> bool:
        """Whether ``/brokers/ids/<b>`` exists (it is ``session``'s ephemeral while it lives)."""
        zk = self._zk
        if zk is not None:
            return zk.get(P.broker(b)) is not None
        return snapshot_has(self._zk_snap, P.broker(b))

    def _alive(self, session: int) -> bool:
        zk = self._zk
        return zk.alive(session) if zk is not None \
            else session in self._zk_snap[ZOOKEEPER.sessions]

    # ------------------------------------------------------------ budgets

    def left(self, kind: str) -> int:
        return self.config.budget(kind) - self.used.get(kind, 0)

    def spend(self, kind: str) -> None:
        assert self.left(kind) > 0, f"no budget left for {kind}"
        self.used[kind] = self.used.get(kind, 0) + 1

    # ------------------------------------------------------------ scheduler

    def enabled_actions(self) -> list[A.Action]:
        out: list[A.Action] = []
        ids = self.ids
        procs = self.procs
        for b in ids:
            if b in self.writes:
                out.append(A.Action(A.COMMIT, b))
                p = procs[b]
                if p.controller_disconnected and self.writes[b].session == p.controller_session:
                    out.append(A.Action(A.COMMIT, b, A.APPLIED))
        for b in ids:
            if not (self.queues[b] and b not in self.writes and procs[b].up):
                continue
            # the head, unless the connection is lost or the controller paused (some events
            # are held then: ``executor.next_index``)
            if (not procs[b].controller_disconnected
                    and self.controller_snapshot(b)[_SESSION] != _CONNECTING) \
                    or X.next_index(self, b) is not None:
                out.append(A.Action(A.PROCESS, b))
        for b in ids:
            cs = procs[b].controller_session
            n = self._next_notification(cs) if cs else None
            if n is not None:
                out.append(A.Action(A.NOTIFY, b, n.path))
        for key in self.channel_keys():
            if self.procs[key.dst].up:
                out.append(A.Action(A.DELIVER, key.src, key))
        for b in ids:
            if procs[b].session_lost:
                out.append(A.Action(A.SESSION_LOST, b))
        for b in ids:
            p = procs[b]
            if p.controller_disconnected:
                out.append(A.Action(A.RECONNECT, b, A.CONTROLLER_SESSION))
            if p.broker_disconnected:
                out.append(A.Action(A.RECONNECT, b, A.BROKER_SESSION))
            elif p.broker_io and p.up:
                out.append(A.Action(A.BROKER_IO, b))
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
        ids = self.ids
        if self.left(A.CRASH) > 0:
            out += [A.Action(A.CRASH, b) for b in ids if self.procs[b].up]
        if self.left(A.RESTART) > 0:
            out += [A.Action(A.RESTART, b) for b in ids
                    if self.procs[b].started and not self.procs[b].up]
        procs = self.procs
        # a lost connection's session may always expire (the other answer to that fault)
        expire = self.left(A.EXPIRE_BROKER) > 0
        out += [A.Action(A.EXPIRE_BROKER, b) for b in ids
                if procs[b].broker_disconnected or (
                    expire and procs[b].up and not procs[b].session_lost
                    and self._alive(procs[b].broker_session)
                    and self._registered(procs[b].broker_session, b))]
        expire = self.left(A.EXPIRE_CONTROLLER) > 0
        out += [A.Action(A.EXPIRE_CONTROLLER, b) for b in ids
                if procs[b].controller_disconnected or (
                    expire and procs[b].up
                    and (b in self.writes or self.controller_facts(b).active))]
        if self.left(A.DROP) > 0:
            pairs = sorted({tuple(sorted((k.src, k.dst))) for k in self.channel_keys()})
            out += [A.Action(A.DROP, a, b) for a, b in pairs]
        if self.left(A.ZK_DISCONNECT) > 0:
            for b in ids:
                p = procs[b]
                if not p.up:
                    if p.started and not p.broker_disconnected:
                        # its network to ZooKeeper is cut: its next start cannot connect
                        out.append(A.Action(A.ZK_DISCONNECT, b, A.BROKER_SESSION))
                    continue
                if not p.controller_disconnected \
                        and (b in self.writes or self.controller_facts(b).active):
                    out.append(A.Action(A.ZK_DISCONNECT, b, A.CONTROLLER_SESSION))
                if not p.broker_disconnected and not p.session_lost \
                        and self._alive(p.broker_session) \
                        and self._registered(p.broker_session, b):
                    out.append(A.Action(A.ZK_DISCONNECT, b, A.BROKER_SESSION))
        return out

    describing = True
    """Whether ``apply`` describes what happened: every line, each in full."""

    def apply(self, action: A.Action, describe: bool = True) -> list[str]:
        """Perform ``action``; one line per thing that happened. ``describe=False`` (the
        search, which reads no line) leaves out the lines of the cores' handlings, the
        decided writes, the commits, the requests sent and the responses, and the costly
        details of the rest: the world reached is the same."""
        self.describing = describe
        kind = action.kind
        handler = X.HANDLERS[kind]
        if kind in A.FAULTS and not self._expires_lost_connection(action):
            self.spend(kind)
        return handler(self, action)

    def _expires_lost_connection(self, action: A.Action) -> bool:
        """An expiry of a session whose connection is lost: the ensemble's other answer to
        that ``ZK_DISCONNECT`` (which spent the budget), not a fault of its own."""
        kind = action.kind
        if kind == A.EXPIRE_CONTROLLER:
            return self.procs[action.broker].controller_disconnected
        if kind == A.EXPIRE_BROKER:
            return self.procs[action.broker].broker_disconnected
        return False

    # ------------------------------------------------------------ queries

    def is_quiescent(self) -> bool:
        """Nothing left that matters: no message, notification, queued event, pending write,
        unnoticed session expiry, lost ZooKeeper connection or non-periodic timer."""
        if self._pending() or self.writes:
            return False
        if any(self.procs[k.dst].up for k in self.channel_keys()):
            return False
        if any(self.queues[b] for b in self.ids if self.procs[b].up):
            return False
        if any(p.session_lost or p.controller_disconnected or p.broker_disconnected
               for p in self.procs.values()):
            return False
        return not any(self.timer_matters(t) for t in self.timers)

    def timer_matters(self, timer: tuple[int, str, str]) -> bool:
        """A pending timer that can still change something: every broker timer, the
        deletion retry while its controller has topics queued for deletion."""
        b, role, kind = timer
        if role == "b":
            return True
        if kind == TimerKind.DELETION_RETRY.value:
            return self.controller_facts(b).deleting
        return kind not in PERIODIC_TIMERS

    def active_controller(self) -> int | None:
        """Who ``/controller`` names."""
        from model_check.world.reads import active_controller

        return active_controller(self.zk)

    def broker_states(self) -> dict[int, str]:
        return {b: self.broker_facts(b).state.value for b in self.ids}

    def enqueue(self, b: int, item: object, front: bool = False) -> None:
        q = self.queues[b]
        assert len(q) < self.config.queue_bound, f"controller {b}'s queue is over its bound"
        self.queues[b] = (item,) + q if front else q + (item,)

    def markers_of(self, b: int) -> list[Marker]:
        return [m for m in self.queues[b] if isinstance(m, Marker)]
