"""``Violation``, ``Invariant`` and the ``@invariant`` decorator that turns a small named
generator of one-line details into a catalogue entry."""

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
    invariant) returns the list of ``Violation``s, empty when it holds."""

    name: str
    kind: str
    source: str
    doc: str
    check: Callable[..., list[Violation]]


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def invariant(kind: str, source: str) -> Callable[[Callable[..., Iterable[str]]], Invariant]:
    """``@invariant("state", "seed 001 §3")`` over ``def name(view): yield detail``: the
    function's name is the invariant's, its docstring the documentation."""
    assert kind in KINDS, kind

    def wrap(fn: Callable[..., Iterable[str]]) -> Invariant:
        name = fn.__name__
        doc = inspect.cleandoc(fn.__doc__ or "")
        assert doc, f"invariant {name} has no docstring"

        def check(*views: object) -> list[Violation]:
            return [Violation(name, _one_line(d)) for d in fn(*views)]

        check.__name__ = name
        check.__doc__ = fn.__doc__
        check.__wrapped__ = fn  # type: ignore[attr-defined]
        return Invariant(name, kind, source, doc, check)

    return wrap
