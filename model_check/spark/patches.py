"""Code patches that must hold on the executors too (mutants, test-only bugs).

A mutant is a patch applied in-process. Spark's Python workers are other processes, so a
patch applied in the driver does not reach them: the engine ships a picklable
``ExecutorPatch`` with every task and applies it around the task's work (and undoes it
after, since a Python worker is reused for the next task, which may belong to a clean run).

``ExecutorPatch.apply()`` returns the function that undoes it. ``MutantPatch(name)`` enters
``model_check.mutants.patched(name)`` (only the name travels; each executor installs the
mutant from its own copy of the code).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol


class ExecutorPatch(Protocol):
    def apply(self) -> Callable[[], None]:
        """Patch this process; return what undoes it."""
        ...


@dataclass(frozen=True)
class MutantPatch:
    """Historic-bug mutant ``name`` of ``model_check.mutants``, applied on an executor."""

    name: str

    def apply(self) -> Callable[[], None]:
        return apply_mutant(self.name)


def apply_mutant(name: str) -> Callable[[], None]:
    """Enter ``model_check.mutants.patched(name)`` in this process; return its exit."""
    from model_check.mutants import patched

    cm = patched(name)
    cm.__enter__()
    return lambda: cm.__exit__(None, None, None)


@contextmanager
def applied(patch: ExecutorPatch | None) -> Iterator[None]:
    if patch is None:
        yield
        return
    undo = patch.apply()
    try:
        yield
    finally:
        undo()
