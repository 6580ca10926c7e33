"""What a search made the code do: ``kcontrol check SCENARIO --coverage``.

A green run proves something only about the code it reached. Given a ``Coverage`` (the
search's ``Memos.coverage``; ``Checks.on_edge``'s ``cov``) the checker counts

* **core steps** -- for every ``Controller.handle`` and ``BrokerCore.handle`` the world runs:
  the handler that acted on the event (``Controller.last_handled``; a broker's by event type,
  a controller request by its class, a timer by its kind), every **transition** of the four
  ZooKeeper-mode tables (``fsm.tables.ZK_TABLES``; no ZooKeeper world takes the KRaft ones)
  the step took (read from the state-change logs: ``partition``/``replica``/``session``
  records of the controller, ``transition`` records of the broker core), the **decision
  kinds** committed and the **leader selectors** that chose a leader
  (``leader_selection.selector_of`` over the controller's ``leader`` records), and the
  **protocol paths** of ``PATHS`` -- branches inside one handler that reviewers asked to see
  exercised (a broker bounce, a reassignment that adds replicas, a controlled shutdown of the
  controller's own broker);
* **invariants** -- on every state and every step the engine checks, which invariants were
  evaluated, whose premise held (``Invariant.premise``: where it does not, the invariant
  held vacuously), which were waived and whether they would have failed
  (``invariants.coverage_of_state`` / ``coverage_of_transition``: a bit mask).

Both are counted per step, memo hits included, so the figures depend only on the explored
graph: the local and the Spark engine report the same ones. The cost stays off the hot
path: the step memo (``model_check.memo.steps``) works a core step's items out once, when
it first runs the step, interns them as one small int, and a hit adds one to that int's
count; the invariant checks (``checks.Checks``) memoise masks beside their verdicts. With no
``Coverage`` nothing is counted and nothing is worked out but on memo misses.

This module is the room for that bookkeeping: the world and the cores know nothing of it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from fsm.broker.commands import REQUESTS
from fsm.broker.core import HANDLED_EVENTS as BROKER_EVENTS
from fsm.broker_states import BROKER_TABLE
from fsm.controller.controller import HANDLED_EVENTS as CONTROLLER_EVENTS
from fsm.controller.leader_selection import DECISION_KINDS, SELECTORS, selector_of
from fsm.controller.records import Entities
from fsm.events import TimerKind
from fsm.tables import ZK_TABLES
from fsm.values import LeaderAndIsr
from invariants import CATALOGUE

Items = tuple[tuple[tuple, int], ...]
"""What one core step did: ``((key, times), ...)``, keys as in ``_report``."""

_TABLE_OF_ENUM = {t.states: t.name for t in ZK_TABLES.values()}
_BROKER_MOVES = {f"{a.value} -> {b.value}": (BROKER_TABLE.name, a.value, b.value)
                 for a, b in BROKER_TABLE.pairs}
_TRANSITION_KINDS = frozenset({"partition", "replica", "session"})
_CONTROLLER_TIMERS = (TimerKind.DELETION_RETRY, TimerKind.AUTO_REBALANCE)
_BROKER_TIMERS = (TimerKind.CONTROLLED_SHUTDOWN_RETRY,)
CONTROLLER_HANDLERS = tuple(e for e in CONTROLLER_EVENTS if e != "TimerFired") + tuple(
    f"TimerFired({k.value})" for k in _CONTROLLER_TIMERS)
BROKER_HANDLERS = tuple(e for e in BROKER_EVENTS if e not in ("RequestReceived", "TimerFired")) \
    + tuple(f"RequestReceived({r})" for r in REQUESTS) \
    + tuple(f"TimerFired({k.value})" for k in _BROKER_TIMERS)

PATHS = {
    "broker bounce": "a BrokerChange names a known broker with a new epoch (it failed and "
                     "joined again between two reads of /brokers/ids)",
    "reassignment adds replicas": "a reassignment starts a replica the partition did not "
                                  "have (the expansion phase)",
    "controlled shutdown of the controller's broker": "the active controller handles the "
                                                      "controlled shutdown of its own broker",
    "state write failed twice": "a partition-state write failed its version condition in the "
                                "retry round too: the decision is owed to the next event",
    "owed decision decided again": "an owed decision is decided again on a later event",
}
"""Protocol paths inside one handler, by name: what each means."""


def _handler(event: object, name: str) -> str:
    if name == "TimerFired":
        kind = getattr(event, "kind", None)
        return f"TimerFired({getattr(kind, 'value', kind)})"
    if name == "RequestReceived":
        return f"RequestReceived({type(getattr(event, 'request', None)).__name__})"
    return name


def _paths(handled: str, event: object, controller_id: int, records: list) -> Iterator[str]:
    """The ``PATHS`` one controller step took (read from its event and its log records)."""
    if handled == "BrokerChange":
        for r in records:
            if r.kind == "info" and r.reason.startswith("brokers failed:") \
                    and not r.reason.endswith("bounced: []"):
                yield "broker bounce"
    elif handled == "ControlledShutdown" and \
            getattr(getattr(event, "request", None), "broker_id", None) == controller_id:
        yield "controlled shutdown of the controller's broker"
    added = owed = again = False
    for r in records:
        if r.kind == "replica" and r.reason == "reassignment: added":
            added = True
        elif r.kind == "gave-up" and "state write failed twice" in r.reason:
            owed = True
        elif r.kind == "info" and r.reason.startswith("owed ") \
                and r.reason.endswith("decided again"):
            again = True
    if added:
        yield "reassignment adds replicas"
    if owed:
        yield "state write failed twice"
    if again:
        yield "owed decision decided again"

# ---------------------------------------------------------------- item sets


def controller_items(handled: str | None, event: object, controller_id: int,
                     records: list) -> Items:
    """The interned items of one controller step (of controller ``controller_id``): its
    handler, the paths it took, and what its state-change log records say."""
    counts: dict[tuple, int] = {}
    if handled is not None:
        counts[("handler", "controller", _handler(event, handled))] = 1
        for path in _paths(handled, event, controller_id, records):
            counts[("path", path)] = 1
    for r in records:
        kind = r.kind
        if kind in _TRANSITION_KINDS:
            table = _TABLE_OF_ENUM.get(type(r.target))
            if table is None or type(r.source) is not type(r.target):
                continue
            key = ("transition", table, r.source.value, r.target.value)
            n = len(r.entity) if isinstance(r.entity, Entities) else 1
            counts[key] = counts.get(key, 0) + n
        elif kind == "leader" and isinstance(r.target, LeaderAndIsr):
            key = ("decision", r.reason)
            counts[key] = counts.get(key, 0) + 1
            sel = selector_of(r.reason, r.source, r.target)
            if sel is not None:
                key = ("selector", sel)
                counts[key] = counts.get(key, 0) + 1
    return tuple(sorted(counts.items()))


def broker_items(event: object, records: Iterable[Any]) -> Items:
    """The interned items of one broker-core step: its handler and its lifecycle moves."""
    counts: dict[tuple, int] = {("handler", "broker", _handler(event, type(event).__name__)): 1}
    for r in records:
        if r.kind == "transition":
            move = _BROKER_MOVES.get(r.detail)
            if move is not None:
                key = ("transition", *move)
                counts[key] = counts.get(key, 0) + 1
    return tuple(sorted(counts.items()))


# ---------------------------------------------------------------- the counts


class Coverage:
    """Counts of one run (or one Spark task): core steps by item set, and the invariant
    masks of the states and steps checked.

    A step's item set is counted by its identity (``steps``: one dict lookup of an int; the
    set itself is kept in ``items``, alive while counted): the step memo hands the same
    object for every step it serves (one object per value: ``StepMemo.items``), so the
    distinct objects are few. Equal sets held by two objects add up in ``plain``, ``merge``
    and the report."""

    __slots__ = ("edges", "items", "states", "steps")

    def __init__(self) -> None:
        self.steps: dict[int, int] = {}  # id(item set) -> steps
        self.items: dict[int, Items] = {}  # id(item set) -> it
        self.states: dict[int, int] = {}
        self.edges: dict[int, int] = {}

    def step(self, items: Items) -> None:
        steps = self.steps
        k = id(items)
        n = steps.get(k)
        if n is None:
            self.items[k] = items
            steps[k] = 1
        else:
            steps[k] = n + 1

    def step_counts(self) -> dict[Items, int]:
        """The steps by item set (by value)."""
        out: dict[Items, int] = {}
        items = self.items
        for k, n in self.steps.items():
            it = items[k]
            out[it] = out.get(it, 0) + n
        return out

    def state(self, mask: int) -> None:
        states = self.states
        states[mask] = states.get(mask, 0) + 1

    def edge(self, mask: int) -> None:
        edges = self.edges
        edges[mask] = edges.get(mask, 0) + 1

    def plain(self) -> tuple:
        """A process-independent value (item sets instead of their numbers) to ship."""
        return (tuple(self.step_counts().items()),
                tuple(self.states.items()), tuple(self.edges.items()))

    def merge(self, other: Coverage | tuple) -> None:
        """Add ``other`` (a ``Coverage`` of this process, or a ``plain()`` from anywhere)."""
        if isinstance(other, Coverage):
            steps: Iterable = other.step_counts().items()
            states, edges = other.states.items(), other.edges.items()
        else:
            steps, states, edges = other
        mine = {it: k for k, it in self.items.items()}
        for items, n in steps:
            k = mine.get(items)
            if k is None:
                k = mine[items] = id(items)
                self.items[k] = items
            self.steps[k] = self.steps.get(k, 0) + n
        for mask, n in states:
            self.states[mask] = self.states.get(mask, 0) + n
        for mask, n in edges:
            self.edges[mask] = self.edges.get(mask, 0) + n

    def report(self) -> dict:
        return _report(self)


# ---------------------------------------------------------------- the report


def _taken_and_never(counts: dict[str, int], universe: Iterable[str]) -> dict:
    names = list(universe)
    return {"taken": {n: counts[n] for n in names if counts.get(n)},
            "never": [n for n in names if not counts.get(n)],
            "other": {n: c for n, c in sorted(counts.items()) if n not in names}}


def _report(cov: Coverage) -> dict:
    """The JSON form: for each table, handler set, decision kinds and selectors what was
    taken (with counts) and what never was; for each invariant its counts."""
    totals: dict[tuple, int] = {}
    core_steps = 0
    for items, n in cov.step_counts().items():
        core_steps += n
        for key, times in items:
            totals[key] = totals.get(key, 0) + times * n
    by: dict[str, dict[str, int]] = {}
    for key, n in totals.items():
        group = key[0] if key[0] in ("decision", "selector", "path") else "/".join(key[:2])
        name = key[-1] if len(key) < 4 else f"{key[2]} -> {key[3]}"
        by.setdefault(group, {})[name] = n
    tables = {}
    for name, t in ZK_TABLES.items():
        pairs = sorted(f"{a.value} -> {b.value}" for a, b in t.pairs)
        tables[name] = _taken_and_never(by.get(f"transition/{name}", {}), pairs)
    out = {
        "core_steps": core_steps,
        "states_checked": sum(cov.states.values()),
        "steps_checked": sum(cov.edges.values()),
        "tables": tables,
        "handlers": {
            "controller": _taken_and_never(by.get("handler/controller", {}),
                                           CONTROLLER_HANDLERS),
            "broker": _taken_and_never(by.get("handler/broker", {}), BROKER_HANDLERS),
        },
        "decisions": _taken_and_never(by.get("decision", {}), DECISION_KINDS),
        "selectors": _taken_and_never(by.get("selector", {}), SELECTORS),
        "paths": _taken_and_never(by.get("path", {}), PATHS),
        "invariants": _invariants(cov),
    }
    out["never"] = never(out)
    return out


def _invariants(cov: Coverage) -> dict:
    out = {}
    for i, inv in enumerate(CATALOGUE):
        counts = [0, 0, 0, 0]  # evaluated, premise, waived, would fail
        masks = cov.edges if inv.kind == "transition" else cov.states
        shift = 4 * i
        for mask, n in masks.items():
            bits = (mask >> shift) & 0xF
            if bits:
                for j in range(4):
                    if bits & (1 << j):
                        counts[j] += n
        entry = {"kind": inv.kind, "evaluated": counts[0], "premise_held": counts[1],
                 "premise": inv.premise_doc}
        if inv.waived_when is not None:
            entry.update(waived=counts[2], would_fail=counts[3], waiver=inv.waiver_doc)
        out[inv.name] = entry
    return out


def never(report: dict) -> list[str]:
    """Everything the run never reached, one line each (``kind: name``): table transitions,
    handlers, decision kinds, selectors, and invariants whose premise never held."""
    out = [f"transition {t}: {p}" for t, e in report["tables"].items() for p in e["never"]]
    out += [f"handler {core}: {h}" for core, e in report["handlers"].items()
            for h in e["never"]]
    out += [f"decision: {d}" for d in report["decisions"]["never"]]
    out += [f"selector: {s}" for s in report["selectors"]["never"]]
    out += [f"path: {p}" for p in report["paths"]["never"]]
    out += [f"invariant premise: {name}" for name, e in report["invariants"].items()
            if e["premise_held"] == 0 and not e.get("would_fail")]
    return out


def lines(report: dict) -> list[str]:
    """The console form of ``report``: every transition, handler, decision kind and selector
    with its count (``-`` never), then each invariant's counts."""
    out = [f"coverage: {report['core_steps']:,} core steps; invariants checked on "
           f"{report['states_checked']:,} states and {report['steps_checked']:,} steps"]

    def block(title: str, entry: dict) -> None:
        names = list(entry["taken"]) + entry["never"]
        taken = len(entry["taken"])
        out.append(f"  {title}: {taken}/{len(names)} taken")
        for name in sorted(names):
            n = entry["taken"].get(name)
            out.append(f"    {name:<58} {'-' if n is None else f'{n:,}':>12}")
        for name, n in entry.get("other", {}).items():
            out.append(f"    {name:<58} {n:>12,} (not in the table)")

    for name, entry in report["tables"].items():
        block(f"table {name}", entry)
    for core, entry in report["handlers"].items():
        block(f"{core} handlers", entry)
    block("decision kinds", report["decisions"])
    block("leader selectors", report["selectors"])
    block("protocol paths", report["paths"])
    out.append(f"  invariants: {'evaluated':>12} {'premise held':>13}")
    for name, e in report["invariants"].items():
        line = f"    {name:<50} {e['evaluated']:>12,} {e['premise_held']:>13,}"
        if "waived" in e:
            line += (f"   waived in {e['waived']:,}, would have failed in "
                     f"{e['would_fail']:,}")
        out.append(line)
    gaps = report["never"]
    out.append(f"  never reached: {len(gaps)}" + ("" if gaps else " (everything was)"))
    return out
