"""The step memo: ``(component snapshot, event) -> (new snapshot, effects)``.

``Controller.handle`` and ``BrokerCore.handle`` are pure (the core does no I/O and keeps no
clock): what a core does with an event is a function of its snapshot, the event and its
config. Across the interleavings of a search the same core meets the same event in the same
state again and again -- on ``standard`` 99% of the ~42,000 ``handle`` calls to depth 8 repeat
one already made -- so a world given a memo (``World(config, memos)``) asks it before it
restores a core and runs it.

A hit hands back the new snapshot and the effects the first call produced: the very same
objects, so the snapshot's digest (``Memos.digests``), the codec's encodings of the
requests in the effects and the views built on them are memo hits further on too. The core is
left as a snapshot in the world (``World.controller_becomes``/``broker_becomes``), restored
only if something reads it later. A miss runs the core as before and records what it did.

The same holds for ZooKeeper (``zk_call``): expiring a session, popping a notification,
committing a write or reading what a queued event needs is a function of ZooKeeper's
snapshot and the call (the function called: a ``ZooKeeper`` method or a reader of
``model_check.world.reads``), and a hit leaves ZooKeeper a snapshot (the memo answers it with
the result, and ``World.zk_call`` takes it), never restored. And for the channels (``ch_call``, ``ch_send``): taking messages off them,
sending one.

A world without a memo -- a replay, a test driving a world by hand, the setup of a scenario
run without coverage -- runs the cores every time. The memo belongs to one ``WorldConfig``
(the cores' configs derive from it) and one version of the code (``Memos.token``): the
search that owns it gives it only to worlds of that config.

Events the codec cannot encode (a value holding a list) are not memoised: the core runs.
The memo is bounded (cleared when full); clearing it only costs time.

**Coverage.** A recorded step keeps, besides its effects, what it did in the coverage's terms
(``coverage.controller_items``/``broker_items``: an item set worked out from the core's
state-change log when the step first runs, one object per value here -- ``intern``; the log
is then emptied -- the search reads none). With a ``coverage.Coverage`` to count into
(``Memos.coverage``) every step, hit or miss, adds one to that object's count (by identity). Steps the memo does not serve count the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from model_check.coverage import Coverage, Items, broker_items, controller_items
from model_check.world.channels import Channels
from model_check.world.codec import Codec
from model_check.world.cores import shared_snapshot

if TYPE_CHECKING:
    from model_check.memo.digests import Digests
    from model_check.world.channels import ChannelKey
    from model_check.world.world import World

LIMIT = 100_000
"""Entries per table (about 1% of the steps of a search miss: ``standard`` to depth 10 needs
a few thousand)."""

_send = Channels.send


class StepMemo:
    """The cores' steps, the ZooKeeper calls and the channel operations of one search."""

    __slots__ = ("ch", "ch_hits", "ch_misses", "codec", "digest", "entries", "hits", "items",
                 "misses", "zk", "zk_hits", "zk_misses")

    def __init__(self, codec: Codec, digests: Digests) -> None:
        self.codec = codec  # the events' keys: their encodings
        self.digest = digests.digest  # the core snapshots' keys: their content digests
        self.entries: dict[tuple, tuple] = {}  # the cores' steps
        self.hits = 0
        self.misses = 0
        self.zk: dict[tuple, tuple] = {}  # ZooKeeper calls (``zk_call``)
        self.zk_hits = 0
        self.zk_misses = 0
        self.ch: dict[tuple, tuple] = {}  # channel operations (``ch_call``, ``ch_send``)
        self.ch_hits = 0
        self.ch_misses = 0
        self.items: dict[Items, Items] = {}  # the steps' item sets, one object per value

    def intern(self, items: Items) -> Items:
        """``items`` as the one object of its value this memo hands out (what ``Coverage``
        counts by identity); the distinct item sets are few (bounded all the same)."""
        table = self.items
        hit = table.get(items)
        if hit is None:
            if len(table) >= LIMIT:
                table.clear()
            hit = table[items] = items
        return hit

    def _event_key(self, event: object) -> Any:
        try:
            return self.codec.encode_once(event)
        except TypeError:
            return None

    def _store(self, key: tuple, value: tuple) -> None:
        entries = self.entries
        if len(entries) >= LIMIT:
            entries.clear()
        entries[key] = value
        self.misses += 1

    def controller_step(self, w: World, b: int, event: object, cov: Coverage | None) -> Any:
        """``w.controllers[b].handle(event)``: the effects."""
        ek = self._event_key(event)
        if ek is None:
            ctl = w.controllers[b]
            w.controller_changed(b)
            if cov is None:
                return ctl.handle(event)  # type: ignore[attr-defined]
            log = ctl.state_change_log  # type: ignore[attr-defined]
            n = len(log)
            effects = ctl.handle(event)  # type: ignore[attr-defined]
            cov.step(self.intern(controller_items(
                ctl.last_handled, event, b, ctl.state_change_log[n:])))  # type: ignore[attr-defined]
            return effects
        key = ("c", b, self.digest(w.controller_snapshot(b)), ek)
        hit = self.entries.get(key)
        if hit is not None:
            self.hits += 1
            w.controller_becomes(b, hit[0])
            if cov is not None:
                cov.step(hit[2])
            return hit[1]
        ctl = w.controllers[b]
        w.controller_changed(b)
        log = ctl.state_change_log  # type: ignore[attr-defined]
        n = len(log)
        effects = ctl.handle(event)  # type: ignore[attr-defined]
        log = ctl.state_change_log  # type: ignore[attr-defined]
        items = self.intern(controller_items(ctl.last_handled, event, b, log[n:]))  # type: ignore[attr-defined]
        del log[:]
        snap = shared_snapshot(ctl.snapshot())  # type: ignore[attr-defined]
        w.cache_controller_snapshot(b, snap)
        self._store(key, (snap, tuple(effects), items))
        if cov is not None:
            cov.step(items)
        return effects

    def broker_step(self, w: World, b: int, event: object, cov: Coverage | None
                    ) -> tuple[Any, Any, Any]:
        """``w.brokers[b].handle(event)``: ``(effects, state before, state after)``."""
        ek = self._event_key(event)
        if ek is not None:
            key = ("b", b, self.digest(w.broker_snapshot(b)), ek)
            hit = self.entries.get(key)
            if hit is not None:
                self.hits += 1
                w.broker_becomes(b, hit[0])
                if cov is not None:
                    cov.step(hit[4])
                return hit[1], hit[2], hit[3]
        core = w.brokers[b]
        before = core.state  # type: ignore[attr-defined]
        log = core.state_change_log  # type: ignore[attr-defined]
        n = len(log)
        effects = core.handle(event)  # type: ignore[attr-defined]
        after = core.state  # type: ignore[attr-defined]
        items: Items = ()
        if ek is not None or cov is not None:
            items = self.intern(broker_items(event, log[n:]))
        if ek is not None:
            del log[:]
            snap = shared_snapshot(core.snapshot())  # type: ignore[attr-defined]
            self._store(key, (snap, tuple(effects), before, after, items))
            w.broker_becomes(b, snap)  # the world holds the shared snapshot, as on a hit
        if cov is not None:
            cov.step(items)
        return effects, before, after

    def zk_call(self, w: World, snap: tuple, fn: Callable[..., Any], args: tuple,
                kwargs: dict[str, Any] | None = None) -> tuple[Any, tuple | None]:
        """``fn(w.zk, *args, **kwargs)`` while ZooKeeper is not restored in ``w`` (``snap``:
        its snapshot), by (ZooKeeper's snapshot, the call): ``(the answer, the snapshot
        ZooKeeper is left as)`` -- a hit leaves it a snapshot (the new one: a read may
        register watches), never restored, and the world takes that snapshot
        (``World.zk_call``); a miss runs the call on the restored ZooKeeper (None: it is the
        truth now). Answers are immutable values, shared by every hit."""
        key = (id(snap), fn, args, tuple(kwargs.items()) if kwargs else ())
        entries = self.zk
        hit = entries.get(key)
        if hit is not None and hit[0] is snap:
            self.zk_hits += 1
            return hit[1], hit[2]
        zk = w.zk
        result = fn(zk, *args, **kwargs) if kwargs else fn(zk, *args)
        if type(result) is list:
            result = tuple(result)  # shared by every hit: immutable
        if len(entries) >= LIMIT:
            entries.clear()
        entries[key] = (snap, result, zk.snapshot())  # the entry keeps ``snap`` alive
        self.zk_misses += 1
        return result, None

    def ch_call(self, w: World, snap: tuple, fn: Callable[..., Any], args: tuple
                ) -> tuple[Any, tuple | None]:
        """``fn(w.channels, *args)`` while the channels are not restored in ``w`` (``snap``:
        their snapshot), by (the channels' snapshot, the call), as ``zk_call``. For the
        operations that take messages off channels (``pop``, ``remove``, ``drop``,
        ``process_gone``, ``drop_connection``): their arguments are small keys."""
        key = (id(snap), fn, args)
        entries = self.ch
        hit = entries.get(key)
        if hit is not None and hit[0] is snap:
            self.ch_hits += 1
            return hit[1], hit[2]
        ch = w.channels
        result = fn(ch, *args)
        if len(entries) >= LIMIT:
            entries.clear()
        entries[key] = (snap, result, ch.snapshot())  # the entry keeps ``snap`` alive
        self.ch_misses += 1
        return result, None

    def ch_send(self, w: World, snap: tuple, key: ChannelKey, message: object
                ) -> tuple | None:
        """``w.channels.send(key, message)`` while the channels are not restored in ``w``
        (``snap``: their snapshot), by (the channels' snapshot, the key, the message's
        encoding), as ``ch_call``: a hit leaves the channels a snapshot -- the one the first
        such send made, answered for the world to take (None: the restored channels sent
        it). A request or a response is sent in many states whose channels are the same."""
        ek = self._event_key(message)
        if ek is None:
            w.channels.send(key, message)
            return None
        k = (id(snap), _send, key, ek)
        entries = self.ch
        hit = entries.get(k)
        if hit is not None and hit[0] is snap:
            self.ch_hits += 1
            return hit[2]  # type: ignore[no-any-return]
        ch = w.channels
        ch.send(key, message)  # raises ChannelFull over the bound: nothing is recorded
        if len(entries) >= LIMIT:
            entries.clear()
        entries[k] = (snap, None, ch.snapshot())  # the entry keeps ``snap`` alive
        self.ch_misses += 1
        return None

    def stats(self) -> dict[str, int]:
        """Hits, misses and entries: the cores' steps, the ZooKeeper calls (``zk_``) and
        the channel operations (``ch_``)."""
        return {"hits": self.hits, "misses": self.misses, "entries": len(self.entries),
                "zk_hits": self.zk_hits, "zk_misses": self.zk_misses,
                "zk_entries": len(self.zk), "ch_hits": self.ch_hits,
                "ch_misses": self.ch_misses}
