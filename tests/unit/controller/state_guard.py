"""A guard for the core's rule that only the controller's setters write partition and replica
states (``Controller._move_partitions`` / ``Controller._move_replicas``).

``guard(monkeypatch)`` makes every ``ControllerContext`` built from then on -- a new one, a
restored one, the fresh one of a resignation -- hold ``partition_state`` and
``replica_states`` in ``SetterOnlyDict``s, which raise ``WrittenOutsideTheSetters`` on any
write made while neither setter is running. A test that drives the controller (directly,
through a world, a transcript or a search) under the guard fails on the first state assigned
anywhere else.
"""

from __future__ import annotations

from typing import Any

import pytest

from fsm.controller.context import ControllerContext
from fsm.controller.controller import Controller

SETTERS = ("_move_partitions", "_move_replicas")


class WrittenOutsideTheSetters(AssertionError):
    """A partition or replica state was written by something else than the setters."""


_inside = [0]  # how many setter calls are running


class SetterOnlyDict(dict):
    """A dict that only the setters may change."""

    __slots__ = ()

    def _writing(self, what: str) -> None:
        if not _inside[0]:
            raise WrittenOutsideTheSetters(f"{what} outside the controller's state setters")

    def __setitem__(self, key: Any, value: Any) -> None:
        self._writing(f"[{key!r}] = {value!r}")
        super().__setitem__(key, value)

    def __delitem__(self, key: Any) -> None:
        self._writing(f"del [{key!r}]")
        super().__delitem__(key)

    def pop(self, *args: Any) -> Any:
        self._writing(f"pop{args!r}")
        return super().pop(*args)

    def popitem(self) -> Any:
        self._writing("popitem()")
        return super().popitem()

    def setdefault(self, *args: Any) -> Any:
        self._writing(f"setdefault{args!r}")
        return super().setdefault(*args)

    def update(self, *args: Any, **kwargs: Any) -> None:
        self._writing("update()")
        super().update(*args, **kwargs)

    def clear(self) -> None:
        self._writing("clear()")
        super().clear()

    def __ior__(self, other: Any) -> SetterOnlyDict:
        self._writing("|=")
        return super().__ior__(other)


def _wrap(ctx: ControllerContext) -> None:
    ctx.partition_state = SetterOnlyDict(ctx.partition_state)
    ctx.replica_states = SetterOnlyDict(ctx.replica_states)


def guard(monkeypatch: pytest.MonkeyPatch) -> None:
    """Guard every controller context built until the test ends (see the module doc)."""
    init = ControllerContext.__init__
    restore = ControllerContext.restore.__func__  # type: ignore[attr-defined]

    def guarded_init(self: ControllerContext) -> None:
        init(self)
        _wrap(self)

    def guarded_restore(cls: type, snap: tuple) -> ControllerContext:
        ctx = restore(cls, snap)
        _wrap(ctx)
        return ctx

    monkeypatch.setattr(ControllerContext, "__init__", guarded_init)
    monkeypatch.setattr(ControllerContext, "restore", classmethod(guarded_restore))
    for name in SETTERS:
        setter = getattr(Controller, name)

        def opened(self: Controller, *args: Any, _setter: Any = setter, **kwargs: Any) -> None:
            _inside[0] += 1
            try:
                _setter(self, *args, **kwargs)
            finally:
                _inside[0] -= 1

        monkeypatch.setattr(Controller, name, opened)
