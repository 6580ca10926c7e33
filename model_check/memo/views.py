"""The views memo: the parts of the global view (``model_check.world.global_view``).

ZooKeeper's part is a function of its znodes, a broker's of its core snapshot (and whether
its process is up or shut down), a controller's of its facts: each part is remembered by
that, so a state's view rebuilds only the parts its step touched and restores nothing it did
not touch. The znode tuple and the core snapshot are looked up by identity first -- most
worlds share them with their parent, and hashing a tuple walks all of it every time -- then
by content (the znode tuple itself; the core snapshot's digest). An entry by identity keeps
its key object alive, so the id stays its own.

ZooKeeper's and the brokers' parts are the shared ones (``global_view.shared_part``); a
controller's is one object per key here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from model_check.world.facts import ControllerFacts
from model_check.world.global_view import broker_view, controller_view, shared_part, zk_view
from model_check.world.zookeeper import ZOOKEEPER

if TYPE_CHECKING:
    from invariants.view import BrokerView, ControllerView, ZkView
    from model_check.memo.digests import Digests
    from model_check.world.world import World

LIMIT = 40_000
"""Entries per table (cleared when full: clearing only costs time)."""


def _put(table: dict, key: object, value: object) -> None:
    if len(table) >= LIMIT:
        table.clear()
    table[key] = value


class ViewMemo:
    """The view parts of one search's worlds."""

    __slots__ = ("brokers", "brokers_by_id", "controllers", "digest", "zks", "zks_by_id")

    def __init__(self, digests: Digests) -> None:
        self.digest = digests.digest
        self.zks: dict[tuple, ZkView] = {}
        self.zks_by_id: dict[int, tuple[tuple, ZkView]] = {}
        self.brokers: dict[tuple[int, bool, bool, bytes], BrokerView] = {}
        self.brokers_by_id: dict[tuple[int, int, bool, bool], tuple[tuple, BrokerView]] = {}
        self.controllers: dict[tuple[int, bool, ControllerFacts], ControllerView] = {}

    def zk(self, world: World) -> ZkView:
        """``zk_view`` of the world's ZooKeeper, by its znodes (the view reads nothing else:
        sessions, watches and pending notifications leave it as it is)."""
        key = world.zk_snapshot()[ZOOKEEPER.nodes]
        known = self.zks_by_id.get(id(key))
        if known is not None and known[0] is key:
            return known[1]
        hit = self.zks.get(key)
        if hit is None:
            hit = shared_part(zk_view(world.zk))  # type: ignore[assignment]
            _put(self.zks, key, hit)
        _put(self.zks_by_id, id(key), (key, hit))
        return hit  # type: ignore[return-value]

    def broker(self, world: World, b: int) -> BrokerView:
        """``broker_view`` of broker ``b``, by its core snapshot."""
        proc = world.procs[b]
        up, shut_down = proc.up, proc.shut_down
        snap = world.broker_snapshot(b)
        known = self.brokers_by_id.get((id(snap), b, up, shut_down))
        if known is not None and known[0] is snap:
            return known[1]
        key = (b, up, shut_down, self.digest(snap))
        hit = self.brokers.get(key)
        if hit is None:
            hit = shared_part(broker_view(b, up, world.brokers[b], shut_down))  # type: ignore[assignment,arg-type]
            _put(self.brokers, key, hit)
        _put(self.brokers_by_id, (id(snap), b, up, shut_down), (snap, hit))
        return hit  # type: ignore[return-value]

    def controller(self, b: int, up: bool, facts: ControllerFacts) -> ControllerView:
        """``controller_view``, by its arguments."""
        key = (b, up, facts)
        hit = self.controllers.get(key)
        if hit is None:
            hit = controller_view(b, up, facts)
            _put(self.controllers, key, hit)
        return hit
