"""The cores' steps memoised: ``(component snapshot, event) -> (new snapshot, effects)``.

``Controller.handle`` and ``BrokerCore.handle`` are pure (the core does no I/O and keeps no
clock): what a core does with an event is a function of its snapshot, the event and its
config. Across the interleavings of a search the same core meets the same event in the same
state again and again -- on ``standard`` 99% of the ~42,000 ``handle`` calls to depth 8 repeat
one already made -- so the world asks this memo before it restores a core and runs it.

A hit hands back the new snapshot and the effects the first call produced: the very same
objects, so the snapshot's digest (``fingerprint.part_digest``), the codec's encodings of the
requests in the effects and the views built on them are memo hits further on too. The core is
left as a snapshot in the world (``World._csnap``/``_bsnap``), restored only if something
reads it later. A miss runs the core as before and records what it did.

The same holds for ZooKeeper (``zk_call``): expiring a session, popping a notification,
committing a write or reading what a queued event needs is a function of ZooKeeper's
snapshot and the call, and a hit leaves ZooKeeper a snapshot, never restored.

**Only while a search runs** (``memoised(config)``: the local engine's ``bfs``, a Spark
expand task, the random walks, the benchmarks' world baseline): a replay, a test driving a
world by hand and the live cluster run the cores every time. A memo belongs to one
``WorldConfig`` (the cores' configs derive from it; an equal config shares it) and to one
version of the code: entering ``memoised`` takes a *code token* -- the identity of every
attribute of every loaded ``fsm`` module (and of the world's ZooKeeper and readers) and of
their classes -- and a patched core (a mutant, a test's monkeypatch) gets a memo of its own.
The token keeps those objects alive while its memo lives, so an id in it is never reused.

Events the codec cannot encode (a value holding a list) are not memoised: the core runs.
The memo is bounded (cleared when full); clearing it only costs time.

**Coverage.** A recorded step keeps, besides its effects, what it did in the coverage's terms
(``coverage.controller_items``/``broker_items``: an interned int worked out from the core's
state-change log when the step first runs; the log is then emptied -- the search reads
none). With a ``coverage.Coverage`` active every step, hit or miss, adds one to that int's
count. Cores the memo does not serve count the same way when coverage is on.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from model_check import coverage
from model_check.world.codec import encode_once
from model_check.world.cores import shared_snapshot
from model_check.world.fingerprint import part_digest

if TYPE_CHECKING:
    from model_check.world.config import WorldConfig
    from model_check.world.world import World

LIMIT = 100_000
"""Entries per memo (about 1% of the steps of a search miss: ``standard`` to depth 10 needs
a few thousand)."""
KEEP = 4
"""Memos kept for other configs or code versions (a test run switches between mutants)."""


class _Memo:
    __slots__ = ("ch", "ch_hits", "ch_misses", "config", "entries", "hits", "keepalive",
                 "misses", "token", "zk", "zk_hits", "zk_misses")

    def __init__(self, config: WorldConfig, token: tuple, keepalive: list) -> None:
        self.config = config
        self.token = token
        self.keepalive = keepalive
        self.entries: dict[tuple, tuple] = {}
        self.zk: dict[tuple, tuple] = {}  # ZooKeeper calls (``zk_call``)
        self.hits = 0  # core steps
        self.misses = 0
        self.zk_hits = 0  # ZooKeeper calls
        self.zk_misses = 0
        self.ch: dict[tuple, tuple] = {}  # channel operations (``ch_call``)
        self.ch_hits = 0
        self.ch_misses = 0


_WORLD_MODULES = frozenset({"model_check.world.zookeeper", "model_check.world.reads"})
"""World modules whose code the memo answers for besides ``fsm`` (``zk_call``)."""

_memos: list[_Memo] = []
_active: _Memo | None = None
_active_config: WorldConfig | None = None
"""The config object of the worlds the active memo serves (checked by identity per step)."""


def code_token() -> tuple[tuple, list]:
    """``(token, keepalive)``: the identity of every attribute of the loaded ``fsm`` modules
    and of the classes they define -- what a monkeypatch of the core changes."""
    ids: list[int] = []
    alive: list[object] = []
    for name in sorted(m for m in list(sys.modules)
                       if m in _WORLD_MODULES or m == "fsm" or m.startswith("fsm.")):
        mod = sys.modules.get(name)
        if mod is None:
            continue
        for value in list(vars(mod).values()):
            ids.append(id(value))
            alive.append(value)
            if isinstance(value, type) and value.__module__ == name:
                for attr in list(vars(value).values()):
                    ids.append(id(attr))
                    alive.append(attr)
    return tuple(ids), alive


@contextmanager
def memoised(config: WorldConfig) -> Iterator[_Memo]:
    """Memoise the cores' steps of worlds of ``config`` for the duration of the block."""
    global _active, _active_config
    token, alive = code_token()
    # an equal config (a Spark task unpickles its own copy) shares the memo
    memo = next((m for m in _memos if m.token == token and m.config == config), None)
    if memo is None:
        memo = _Memo(config, token, alive)
    else:
        _memos.remove(memo)
    _memos.insert(0, memo)  # most recently used first
    del _memos[KEEP:]
    previous = _active, _active_config
    _active, _active_config = memo, config
    try:
        yield memo
    finally:
        _active, _active_config = previous


def _event_key(event: object) -> Any:
    try:
        return encode_once(event)
    except TypeError:
        return None


def _store(memo: _Memo, key: tuple, value: tuple) -> None:
    entries = memo.entries
    if len(entries) >= LIMIT:
        entries.clear()
    entries[key] = value
    memo.misses += 1


def _hit(memo: _Memo, key: tuple, cores: dict, snaps: dict, b: int) -> tuple | None:
    """The recorded step for ``key``; on a hit core ``b`` becomes its new snapshot in the
    world (restored from it only if something reads it)."""
    hit = memo.entries.get(key)
    if hit is not None:
        memo.hits += 1
        dict.pop(cores, b, None)
        snaps[b] = hit[0]
    return hit


def controller_step(w: World, b: int, event: object) -> Any:
    """``w.controllers[b].handle(event)``, memoised while a search runs: the effects."""
    memo = _active
    ek = None if memo is None or w.config is not _active_config else _event_key(event)
    if ek is None:
        ctl = w.controllers[b]
        w.controller_changed(b)
        cov = coverage.active
        if cov is None:
            return ctl.handle(event)  # type: ignore[attr-defined]
        log = ctl.state_change_log  # type: ignore[attr-defined]
        n = len(log)
        effects = ctl.handle(event)  # type: ignore[attr-defined]
        cov.step(coverage.controller_items(
            ctl.last_handled, event, b, ctl.state_change_log[n:]))  # type: ignore[attr-defined]
        return effects
    key = ("c", b, part_digest(w.controller_snapshot(b)), ek)
    hit = _hit(memo, key, w.controllers, w._csnap, b)  # type: ignore[arg-type]
    if hit is not None:
        cov = coverage.active
        if cov is not None:
            cov.step(hit[2])
        return hit[1]
    ctl = w.controllers[b]
    w.controller_changed(b)
    log = ctl.state_change_log  # type: ignore[attr-defined]
    n = len(log)
    effects = ctl.handle(event)  # type: ignore[attr-defined]
    log = ctl.state_change_log  # type: ignore[attr-defined]
    items = coverage.controller_items(ctl.last_handled, event, b,  # type: ignore[attr-defined]
                                      log[n:])
    del log[:]
    snap = w._csnap[b] = shared_snapshot(ctl.snapshot())  # type: ignore[attr-defined]
    _store(memo, key, (snap, tuple(effects), items))  # type: ignore[arg-type]
    cov = coverage.active
    if cov is not None:
        cov.step(items)
    return effects


def broker_step(w: World, b: int, event: object) -> tuple[Any, Any, Any]:
    """``w.brokers[b].handle(event)``, memoised while a search runs: ``(effects, state
    before, state after)``."""
    memo = _active
    cov = coverage.active
    ek = None if memo is None or w.config is not _active_config else _event_key(event)
    if ek is not None:
        key = ("b", b, part_digest(w.broker_snapshot(b)), ek)
        hit = _hit(memo, key, w.brokers, w._bsnap, b)  # type: ignore[arg-type]
        if hit is not None:
            if cov is not None:
                cov.step(hit[4])
            return hit[1], hit[2], hit[3]
    core = w.brokers[b]
    before = core.state  # type: ignore[attr-defined]
    log = core.state_change_log  # type: ignore[attr-defined]
    n = len(log)
    effects = core.handle(event)  # type: ignore[attr-defined]
    after = core.state  # type: ignore[attr-defined]
    items = -1
    if ek is not None or cov is not None:
        items = coverage.broker_items(event, log[n:])
    if ek is not None:
        del log[:]
        snap = shared_snapshot(core.snapshot())  # type: ignore[attr-defined]
        _store(memo, key, (snap, tuple(effects), before, after, items))  # type: ignore[arg-type]
        dict.pop(w.brokers, b, None)  # the world holds the shared snapshot, as on a hit
        w._bsnap[b] = snap
    if cov is not None:
        cov.step(items)
    return effects, before, after


def zk_call(w: World, target: str | Callable[..., Any], args: tuple,
            kwargs: dict[str, Any] | None = None) -> Any:
    """``w.zk.<target>(*args, **kwargs)`` (``target`` a method name) or ``target(w.zk,
    *args)`` (a reader of ``model_check.world.reads``), memoised while a search runs by
    (ZooKeeper's snapshot, the call): a hit leaves ZooKeeper a snapshot (the new one: a read
    may register watches), never restored. Only while ZooKeeper is not restored in this
    world (once it is, calls go to it). Answers are immutable values, shared by every hit."""
    memo = _active
    if memo is None or w._zk is not None or w.config is not _active_config:
        return _call(w, target, args, kwargs)
    snap = w._zk_snap
    key = (id(snap), target, args, tuple(kwargs.items()) if kwargs else ())
    entries = memo.zk
    hit = entries.get(key)
    if hit is not None and hit[0] is snap:
        memo.zk_hits += 1
        w._zk_snap = hit[2]
        return hit[1]
    result = _call(w, target, args, kwargs)
    if type(result) is list:
        result = tuple(result)  # shared by every hit: immutable
    if len(entries) >= LIMIT:
        entries.clear()
    entries[key] = (snap, result, w.zk.snapshot())  # the entry keeps ``snap`` alive
    memo.zk_misses += 1
    return result


def ch_call(w: World, name: str, args: tuple) -> Any:
    """``w.channels.<name>(*args)``, memoised while a search runs by (the channels' snapshot,
    the call), as ``zk_call`` is: a hit leaves the channels a snapshot, never restored. For
    the operations that take messages off channels (``pop``, ``remove``, ``drop``,
    ``process_gone``, ``drop_connection``): their arguments are small keys."""
    memo = _active
    if memo is None or w._channels is not None or w.config is not _active_config:
        return getattr(w.channels, name)(*args)
    snap = w._ch_snap
    key = (id(snap), name, args)
    entries = memo.ch
    hit = entries.get(key)
    if hit is not None and hit[0] is snap:
        memo.ch_hits += 1
        w._ch_snap = hit[2]
        return hit[1]
    ch = w.channels
    result = getattr(ch, name)(*args)
    if len(entries) >= LIMIT:
        entries.clear()
    entries[key] = (snap, result, ch.snapshot())  # the entry keeps ``snap`` alive
    memo.ch_misses += 1
    return result


def ch_send(w: World, key: Any, message: object) -> None:
    """``w.channels.send(key, message)``, memoised while a search runs by (the channels'
    snapshot, the key, the message's encoding), as ``ch_call`` is: a hit leaves the channels
    a snapshot -- the one the first such send made -- never restored. A request or a response
    is sent in many states whose channels are the same."""
    memo = _active
    ek = None
    if memo is not None and w._channels is None and w.config is _active_config:
        ek = _event_key(message)
    if ek is None:
        w.channels.send(key, message)
        return
    snap = w._ch_snap
    k = (id(snap), "send", key, ek)
    entries = memo.ch
    hit = entries.get(k)
    if hit is not None and hit[0] is snap:
        memo.ch_hits += 1
        w._ch_snap = hit[2]
        return
    ch = w.channels
    ch.send(key, message)  # raises ChannelFull over the bound: nothing is recorded
    if len(entries) >= LIMIT:
        entries.clear()
    entries[k] = (snap, None, ch.snapshot())  # the entry keeps ``snap`` alive
    memo.ch_misses += 1


def _call(w: World, target: str | Callable[..., Any], args: tuple,
          kwargs: dict[str, Any] | None) -> Any:
    if type(target) is str:
        return getattr(w.zk, target)(*args, **(kwargs or {}))
    return target(w.zk, *args, **(kwargs or {}))  # type: ignore[operator]


def stats() -> dict[str, int]:
    """Hits, misses and entries of the memo in use (or the last one used): the cores'
    steps, and (``zk_``) the ZooKeeper calls."""
    memo = _active or (_memos[0] if _memos else None)
    if memo is None:
        return dict.fromkeys(("hits", "misses", "entries", "zk_hits", "zk_misses",
                              "zk_entries", "ch_hits", "ch_misses"), 0)
    return {"hits": memo.hits, "misses": memo.misses, "entries": len(memo.entries),
            "zk_hits": memo.zk_hits, "zk_misses": memo.zk_misses, "zk_entries": len(memo.zk),
            "ch_hits": memo.ch_hits, "ch_misses": memo.ch_misses}
