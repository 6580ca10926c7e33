"""Seeded random walks over a ``KRaftWorld``: the object-world walks
(``model_check.objects.walk``) over the KRaft kind; faults are ``kind.FAULTS``."""

from __future__ import annotations

from collections.abc import Callable

from model_check.kraft.kind import FAULTS, KRAFT
from model_check.kraft.scenario import KRaftScenario
from model_check.objects import walk
from model_check.objects.walk import DEFAULT_WALK_DEPTH, FAULT_WEIGHT
from model_check.search import Level, Result

__all__ = ["DEFAULT_WALK_DEPTH", "FAULTS", "FAULT_WEIGHT", "walks"]


def walks(scenario: KRaftScenario, steps: int, seed: int, walk_depth: int | None = None,
          on_walk: Callable[[Level], None] | None = None,
          reached: set[tuple[str, ...]] | None = None) -> Result:
    return walk.walks(KRAFT, scenario, steps, seed, walk_depth, on_walk, reached)
