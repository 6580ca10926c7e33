"""What the scheduler and the global view need to know about a component, memoised by content.

A step touches one or two components of the world; the others keep the very same snapshot
tuple as the parent state's. Asking ``controllers[b].is_active`` of a copy-on-write world
restores the whole controller just to read one flag, and the checker asks such questions of
every component of every state (which actions are enabled, what the invariants see). This
module answers them once per distinct component snapshot instead: each ``*_facts`` function
keys a bounded memo by ``(broker id, part_digest(snapshot))`` -- the same 16-byte content
digest the fingerprint uses, itself memoised by identity -- and restores the component only
on a miss (and then only if the world has not materialised it already).

A fact is a pure function of the component's snapshot (and of the broker id, for broker
facts), so the memo never changes an answer; clearing it when full only costs time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from fsm.broker_states import BrokerState
from fsm.values import TopicPartition
from model_check.world.fingerprint import part_digest

if TYPE_CHECKING:
    from model_check.world.world import World

_LIMIT = 40_000


class ControllerFacts(NamedTuple):
    active: bool
    epoch: int
    deleting: bool  # topics queued for deletion (the deletion-retry timer matters)
    awaiting_write: bool  # a decided write awaits its result (a cluster load waits too)
    live: tuple[int, ...] = ()  # the brokers it holds live (sorted; empty unless active)
    shutting_down: tuple[int, ...] = ()  # those of them in a controlled shutdown (sorted)


class BrokerFacts(NamedTuple):
    state: BrokerState
    led: tuple[tuple[TopicPartition, tuple[int, ...], tuple[int, ...]], ...]
    """``(tp, ISR view, replicas)`` of every replica the broker acts as leader of."""


_controllers: dict[tuple[int, bytes], ControllerFacts] = {}
_brokers: dict[tuple[int, bytes], BrokerFacts] = {}


def _put(memo: dict, key: object, value: object) -> None:
    if len(memo) >= _LIMIT:
        memo.clear()
    memo[key] = value


_controllers_by_id: dict[tuple[int, int], tuple[tuple, ControllerFacts]] = {}
_brokers_by_id: dict[tuple[int, int], tuple[tuple, BrokerFacts]] = {}
"""The same facts by ``(id(snapshot), b)`` first: a state's components are mostly the shared
objects of its parent's (``fingerprint.Shared``), and one lookup of a small key costs less
than two -- the digest's, in a table five times larger, then the content key's. The entry
keeps the snapshot alive: its id stays its own."""


def controller_facts(world: World, b: int) -> ControllerFacts:
    snap = world.controller_snapshot(b)
    known = _controllers_by_id.get((id(snap), b))
    if known is not None and known[0] is snap:
        return known[1]
    key = (b, part_digest(snap))
    hit = _controllers.get(key)
    if hit is None:
        c = world.controllers[b]
        active = c.is_active
        hit = ControllerFacts(active, c.epoch, bool(c.topics_to_delete()),
                              c.awaiting_write is not None,
                              tuple(sorted(c.live_brokers())) if active else (),
                              tuple(sorted(c.shutting_down())) if active else ())
        _put(_controllers, key, hit)
    _put(_controllers_by_id, (id(snap), b), (snap, hit))
    return hit


def broker_facts(world: World, b: int) -> BrokerFacts:
    snap = world.broker_snapshot(b)
    known = _brokers_by_id.get((id(snap), b))
    if known is not None and known[0] is snap:
        return known[1]
    key = (b, part_digest(snap))
    hit = _brokers.get(key)
    if hit is None:
        core = world.brokers[b]
        led = tuple((tp, tuple(v.isr), tuple(v.replicas)) for tp, v in core.replicas()
                    if core.believes_leader(tp))
        hit = BrokerFacts(core.state, led)
        _put(_brokers, key, hit)
    _put(_brokers_by_id, (id(snap), b), (snap, hit))
    return hit


def memo_sizes() -> dict[str, int]:
    """How many entries each memo holds (benchmarks, tests)."""
    return {"controllers": len(_controllers), "brokers": len(_brokers)}
