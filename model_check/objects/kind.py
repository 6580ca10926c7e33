"""A world kind: what the object-world checker needs to know about one family of worlds.

A world of a kind is a Python object with ``snapshot()`` (an independent copy to keep),
``key()`` (a 64-bit integer naming its state: equal states, equal keys), ``enabled_actions()``
(a deterministic list; reading it changes nothing) and ``apply(action)``. Everything else --
the scenario format, the setup that builds the start world, the view the invariants read, the
invariants themselves, the coverage hooks, how an action reads in a trace, which actions are
faults -- the kind says (``WorldKind``). ``KINDS`` names every kind by the module that defines
it, so a Spark task can find a kind by its name without shipping functions.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

Reached = set[tuple[str, ...]]
"""What a run reached (table moves, requests, records...): the kind's coverage items."""
Found = tuple[str, str]
"""A violation: ``(invariant, detail)``."""


@dataclass(frozen=True)
class Start:
    """The start of a search: the world after the setup (a snapshot to copy from), the setup's
    actions, and the setup's own violation if it met one."""

    snapshot: Any
    setup: tuple[Any, ...]
    found: Found | None


@dataclass(frozen=True)
class WorldKind:
    """One family of object worlds (module docstring)."""

    name: str
    """Short and stable: the report's ``mode``, the result's ``checks``, the Spark job's
    handle on the kind (``KINDS``)."""
    load: Callable[[str], Any]
    """A scenario by shipped name or path (raises the kind's scenario error)."""
    names: Callable[[], list[str]]
    """The shipped scenarios."""
    title: Callable[[Any], str]
    """What the command's first line says of a scenario, e.g. ``KRaft: 3 brokers, ...``."""
    start: Callable[[Any, Reached | None], Start]
    """The setup run and checked step by step; ``reached`` fills with what it reached."""
    restore: Callable[[Any], Any]
    """A world of its own from a snapshot (``Start.snapshot`` or ``world.snapshot()``)."""
    watch: Callable[[Any, Reached | None], None]
    """Have a world (and the copies made of it) add what it reaches to the set, or stop."""
    view_of: Callable[[Any], Any]
    check_state: Callable[[Any], Found | None]
    """The state invariants of a view (and the quiescent ones when nothing is pending)."""
    check_edge: Callable[[Any, Any], Found | None]
    """The transition invariants of a step, ``(view before, view after)``."""
    describe: Callable[[Any, Any], str]
    """An action as a trace line reads it, ``describe(action, scenario)``."""
    is_fault: Callable[[Any], bool]
    """Whether random walks weight the action as a fault (``walk.FAULT_WEIGHT``)."""
    patched: Callable[[str | None], AbstractContextManager[Any]]
    """The kind's mutant ``name`` applied for a block (None: the clean code)."""
    coverage_lines: Callable[[Reached], list[str]]
    coverage_unreached: Callable[[Reached], list[tuple[str, ...]]]


KINDS: dict[str, str] = {
    "kraft": "model_check.kraft.kind:KRAFT",
    "raft": "model_check.raft.kind:RAFT",
}
"""Every kind, by name: ``module:attribute`` of its ``WorldKind``."""


def kind_named(name: str) -> WorldKind:
    """The kind called ``name`` (imported on first use; a Spark task calls this)."""
    if name not in KINDS:
        raise KeyError(f"no world kind {name!r} (have: {sorted(KINDS)})")
    module, attribute = KINDS[name].split(":")
    kind = getattr(importlib.import_module(module), attribute)
    assert isinstance(kind, WorldKind) and kind.name == name, f"{KINDS[name]} is not {name!r}"
    return kind
