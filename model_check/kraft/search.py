"""The KRaft checker's search: the object-world search (``model_check.objects.search``) over
the KRaft kind (``kind.KRAFT``). Kept here under its old names: ``bfs``, ``replay``,
``start`` and the checks, for the tests, the transcripts and ``scripts/walk_all.py``."""

from __future__ import annotations

from collections.abc import Callable

from model_check.kraft.kind import KRAFT, check_edge, check_state, start
from model_check.kraft.scenario import KRaftScenario
from model_check.kraft.world import KAction, KRaftWorld
from model_check.objects import search
from model_check.objects.kind import Start
from model_check.objects.search import ROOT, STEP_RAISED, path_to
from model_check.search import Level, Result

KStart = Start

__all__ = ["KStart", "ROOT", "STEP_RAISED", "bfs", "check_edge", "check_state", "path_to",
           "replay", "start"]


def bfs(scenario: KRaftScenario, depth: int | None = None, max_states: int | None = None,
        on_level: Callable[[Level], None] | None = None,
        reached: set[tuple[str, ...]] | None = None) -> Result:
    """``reached``: fill it with what the run reached (``coverage.py``)."""
    return search.bfs(KRAFT, scenario, depth, max_states, on_level, reached)


def replay(scenario: KRaftScenario, path: tuple[int, ...]) -> list[tuple[KAction, KRaftWorld]]:
    """The worlds along ``path`` (action indices after the setup), for a trace."""
    return search.replay(KRAFT, scenario, path)
