"""A transition table declared once, as data, and what is compiled from it.

Every state change in kcontrol goes through one of the tables of ``fsm.tables``: four
in ZooKeeper mode (partition, replica, ZooKeeper client session, broker session) and
two in KRaft mode (broker membership at the quorum controller, KRaft broker
lifecycle). A table is a frozen set
of ``(source, target)`` pairs over an ``enum.Enum`` of states. From that one
declaration we derive:

* a fast validity lookup (``check``) that the controller calls on every
  transition, in the manner of Kafka's ``validPreviousStates``;
* a ``transitions`` state machine (``build_machine``) for random walks in the
  tests and for the diagrams, built from the same pairs, never a second copy.

An invalid transition raises :class:`IllegalTransition`, which names the
entity (``topic-0``, ``(topic-0, broker 2)``), its state and the target.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

S = TypeVar("S", bound=enum.Enum)


class IllegalTransition(Exception):
    """A state change that the table does not allow."""

    def __init__(self, table: str, entity: str, current: enum.Enum, target: enum.Enum,
                 valid_previous: Iterable[enum.Enum]) -> None:
        self.table = table
        self.entity = entity
        self.current = current
        self.target = target
        self.valid_previous = tuple(valid_previous)
        allowed = ", ".join(s.value for s in self.valid_previous) or "none"
        super().__init__(
            f"illegal {table} transition for {entity}: {current.value} -> {target.value} "
            f"(valid previous states of {target.value}: {allowed})"
        )


def trigger_name(target: enum.Enum) -> str:
    """The ``transitions`` trigger that moves a machine to ``target``."""
    return f"to_{target.value}"


@dataclass(frozen=True)
class TransitionTable(Generic[S]):
    """One table: its name, its states, its initial state and its allowed moves."""

    name: str
    states: type[S]
    initial: S
    pairs: frozenset[tuple[S, S]]
    _targets: Mapping[S, frozenset[S]] = field(init=False, repr=False, compare=False)
    _previous: Mapping[S, tuple[S, ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        members = set(self.states)
        for src, dst in self.pairs:
            if src not in members or dst not in members:
                raise ValueError(f"{self.name} table names a state outside {self.states.__name__}")
        targets = {s: frozenset(d for (a, d) in self.pairs if a is s) for s in self.states}
        previous = {
            s: tuple(a for a in self.states if (a, s) in self.pairs) for s in self.states
        }
        object.__setattr__(self, "_targets", targets)
        object.__setattr__(self, "_previous", previous)

    def is_valid(self, current: S, target: S) -> bool:
        return target in self._targets[current]

    def targets(self, current: S) -> frozenset[S]:
        return self._targets[current]

    def valid_previous(self, target: S) -> tuple[S, ...]:
        return self._previous[target]

    def check(self, entity: str, current: S, target: S) -> S:
        """Return ``target`` when the move is allowed, else raise :class:`IllegalTransition`."""
        if target not in self._targets[current]:
            raise IllegalTransition(self.name, entity, current, target, self._previous[target])
        return target

    def sorted_pairs(self) -> list[tuple[S, S]]:
        """The pairs in declaration order of the enum (stable output for diagrams)."""
        order = {s: i for i, s in enumerate(self.states)}
        return sorted(self.pairs, key=lambda p: (order[p[0]], order[p[1]]))

    def machine_spec(self) -> dict[str, Any]:
        """Keyword arguments for a ``transitions`` Machine, derived from the pairs."""
        return {
            "states": [s.value for s in self.states],
            "transitions": [
                {"trigger": trigger_name(dst), "source": src.value, "dest": dst.value}
                for src, dst in self.sorted_pairs()
            ],
            "initial": self.initial.value,
            "auto_transitions": False,
            "send_event": False,
        }

    def build_machine(self, model: Any | None = None) -> Any:
        """A ``transitions.Machine`` built from this table over ``model`` (or a fresh model).

        The model is ``machine.models[0]``; it has one trigger ``to_<State>`` per target.
        """
        from transitions import Machine  # a pure library; imported lazily to keep the core light

        return Machine(model=model if model is not None else _Model(), **self.machine_spec())


class _Model:
    """A bare model for machines built without one."""

    state: str


def table(name: str, states: type[S], initial: S,
          moves: Mapping[S, Iterable[S]]) -> TransitionTable[S]:
    """Declare a table as ``{source: [targets...]}``, the way the seeds list them."""
    pairs = frozenset((src, dst) for src, dsts in moves.items() for dst in dsts)
    return TransitionTable(name=name, states=states, initial=initial, pairs=pairs)
