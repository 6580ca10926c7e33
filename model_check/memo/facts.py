"""The facts memo: what the scheduler and the global view need to know about a component.

A step touches one or two components of the world; the others keep the very same snapshot
tuple as the parent state's. Asking ``controllers[b].is_active`` of a copy-on-write world
restores the whole controller just to read one flag, and the checker asks such questions of
every component of every state (which actions are enabled, what the invariants see). This
memo answers them once per distinct component snapshot instead: it keys a bounded table by
``(broker id, part_digest(snapshot))`` -- the same 16-byte content digest the fingerprint
uses, itself memoised by identity -- and restores the component only on a miss (and then
only if the world has not materialised it already).

A fact is a pure function of the component's snapshot (and of the broker id, for broker
facts: ``model_check.world.facts``), so the memo never changes an answer; clearing a table
when full only costs time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from model_check.world.facts import BrokerFacts, ControllerFacts, broker_facts, controller_facts

if TYPE_CHECKING:
    from model_check.memo.digests import Digests
    from model_check.world.world import World

LIMIT = 40_000


def _put(table: dict, key: object, value: object) -> None:
    if len(table) >= LIMIT:
        table.clear()
    table[key] = value


class FactsMemo:
    """The controllers' and the brokers' facts, by content and by identity.

    The by-identity tables (``(id(snapshot), b)``) are asked first: a state's components are
    mostly the shared objects of its parent's (``fingerprint.Shared``), and one lookup of a
    small key costs less than two -- the digest's, in a table five times larger, then the
    content key's. An entry keeps its snapshot alive: its id stays its own."""

    __slots__ = ("brokers", "brokers_by_id", "controllers", "controllers_by_id", "digest")

    def __init__(self, digests: Digests) -> None:
        self.digest = digests.digest
        self.controllers: dict[tuple[int, bytes], ControllerFacts] = {}
        self.brokers: dict[tuple[int, bytes], BrokerFacts] = {}
        self.controllers_by_id: dict[tuple[int, int], tuple[tuple, ControllerFacts]] = {}
        self.brokers_by_id: dict[tuple[int, int], tuple[tuple, BrokerFacts]] = {}

    def controller(self, world: World, b: int) -> ControllerFacts:
        snap = world.controller_snapshot(b)
        known = self.controllers_by_id.get((id(snap), b))
        if known is not None and known[0] is snap:
            return known[1]
        key = (b, self.digest(snap))
        hit = self.controllers.get(key)
        if hit is None:
            hit = controller_facts(world.controllers[b])
            _put(self.controllers, key, hit)
        _put(self.controllers_by_id, (id(snap), b), (snap, hit))
        return hit

    def broker(self, world: World, b: int) -> BrokerFacts:
        snap = world.broker_snapshot(b)
        known = self.brokers_by_id.get((id(snap), b))
        if known is not None and known[0] is snap:
            return known[1]
        key = (b, self.digest(snap))
        hit = self.brokers.get(key)
        if hit is None:
            hit = broker_facts(world.brokers[b])
            _put(self.brokers, key, hit)
        _put(self.brokers_by_id, (id(snap), b), (snap, hit))
        return hit

    def sizes(self) -> dict[str, int]:
        """How many entries each content table holds (benchmarks, tests)."""
        return {"controllers": len(self.controllers), "brokers": len(self.brokers)}
