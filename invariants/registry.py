"""``Violation``, ``Invariant`` and the ``@invariant`` decorator that turns a small named
generator of one-line details -- with its premise, and the setting that waives it if any --
into a catalogue entry."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass

STATE = "state"
TRANSITION = "transition"
QUIESCENT = "quiescent"
KINDS = (STATE, TRANSITION, QUIESCENT)


@dataclass(frozen=True)
class Violation:
    """One broken invariant: its name and a one-line ``detail``."""

    invariant: str
    detail: str

    def __str__(self) -> str:
        return f"{self.invariant}: {self.detail}"


@dataclass(frozen=True)
class Invariant:
    """A catalogue entry. ``check(view)`` (``check(before, after)`` for a transition
    invariant) returns the list of ``Violation``s, empty when it holds.

    ``premise(view)`` (``premise(before, after)``) says whether the situation the invariant
    is about exists at all -- two active controllers, a leader that changed, a deleted
    topic: where it does not, the invariant holds vacuously and proved nothing. The model
    checker's ``--coverage`` counts how often it held. ``premise_doc``: its one line.

    ``waived_when(view)``: a setting under which the invariant is knowingly not enforced
    (unclean leader election accepts losing data). ``check`` then returns nothing;
    ``check_unwaived`` still evaluates it, so the checker can report how often a waived
    invariant would have failed instead of skipping it silently. ``waiver_doc``: why."""

    name: str
    kind: str
    source: str
    doc: str
    check: Callable[..., list[Violation]]
    premise: Callable[..., bool]
    premise_doc: str
    waived_when: Callable[..., bool] | None = None
    waiver_doc: str = ""
    check_unwaived: Callable[..., list[Violation]] | None = None


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _first_line(fn: Callable[..., object], what: str) -> str:
    doc = inspect.cleandoc(fn.__doc__ or "")
    assert doc, f"{what} {fn.__name__} has no docstring"
    return _one_line(doc.split("\n\n")[0])


def invariant(kind: str, source: str, *, premise: Callable[..., bool],
              waived_when: Callable[..., bool] | None = None
              ) -> Callable[[Callable[..., Iterable[str]]], Invariant]:
    """``@invariant("state", "seed 001 §3", premise=two_leaders)`` over
    ``def name(view): yield detail``: the function's name is the invariant's, its docstring
    the documentation; ``premise`` (and ``waived_when``) are predicates over the same
    arguments whose docstrings say, in one line, what they test."""
    assert kind in KINDS, kind

    def wrap(fn: Callable[..., Iterable[str]]) -> Invariant:
        name = fn.__name__
        doc = inspect.cleandoc(fn.__doc__ or "")
        assert doc, f"invariant {name} has no docstring"

        def check_unwaived(*views: object) -> list[Violation]:
            return [Violation(name, _one_line(d)) for d in fn(*views)]

        if waived_when is None:
            check = check_unwaived
        else:
            def check(*views: object) -> list[Violation]:
                if waived_when(*views):
                    return []
                return check_unwaived(*views)

        check.__name__ = name
        check.__doc__ = fn.__doc__
        check.__wrapped__ = fn  # type: ignore[attr-defined]
        return Invariant(name, kind, source, doc, check, premise,
                         _first_line(premise, "premise"), waived_when,
                         "" if waived_when is None else _first_line(waived_when, "waiver"),
                         check_unwaived)

    return wrap
