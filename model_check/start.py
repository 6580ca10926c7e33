"""The search's initial state: a fresh world, optionally brought up by a fixed setup.

``init = "running"``: every broker starts and the scenario's topics are created, each
followed by the world's fixed progress policy (``runner.next_progress``) until nothing is
left -- the cluster a person would have before the faults begin. The setup is one fixed
path (not explored); its actions are kept so a trace can show and replay them.
``init = "empty"``: the search starts from the fresh world (brokers start as actions).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from model_check.checks import STEP_RAISED, Checks, Found
from model_check.scenario import Scenario
from model_check.world import World, WorldConfig
from model_check.world import actions as A
from model_check.world.runner import MAX_TIMERS_PER_RUN, next_progress

if TYPE_CHECKING:
    from model_check.coverage import Coverage
    from model_check.memo import Memos

MAX_SETUP_STEPS = 5000


@dataclass(frozen=True)
class Start:
    config: WorldConfig
    snapshot: tuple
    setup: tuple[A.Action, ...]
    found: Found | None = None  # a violation during the setup (then ``setup`` ends there)


def start(scenario: Scenario, checks: Checks | None = None, memos: Memos | None = None
          ) -> Start:
    """The start state of ``scenario``. ``memos``: the search's (``model_check.memo``; its
    config is the scenario's), to run the setup with -- and count its coverage into
    ``memos.coverage``."""
    config = scenario.world_config() if memos is None else memos.config
    world = World(config, memos)
    cov = None if memos is None else memos.coverage
    setup: list[A.Action] = []
    view = checks.view(world) if checks else None
    found = checks.on_state(view) if checks else None
    _cover(checks, view, cov)
    if found is None and scenario.init == "running":
        plan = [a for a in world.enabled_actions() if a.kind == A.START]
        for i in range(scenario.setup_admin):
            plan.append(A.Action(A.ADMIN, 0, i))
        for action in plan:
            found, view = _step(world, action, setup, checks, view, cov)
            if found is None:
                found, view = _settle(world, setup, checks, view, cov)
            if found is not None:
                break
    return Start(config, world.snapshot(), tuple(setup), found)


def _settle(world: World, setup: list[A.Action], checks: Checks | None, view: object,
            cov: Coverage | None) -> tuple[Found | None, object]:
    fired = 0
    for _ in range(MAX_SETUP_STEPS):
        a = next_progress(world, timers=fired < MAX_TIMERS_PER_RUN)
        if a is None:
            return None, view
        fired += a.kind == A.TIMER
        found, view = _step(world, a, setup, checks, view, cov)
        if found is not None:
            return found, view
    raise AssertionError(f"the setup did not settle in {MAX_SETUP_STEPS} steps")


def _step(world: World, action: A.Action, setup: list[A.Action], checks: Checks | None,
          view: object, cov: Coverage | None) -> tuple[Found | None, object]:
    setup.append(action)
    try:
        world.apply(action)
    except Exception as e:  # noqa: BLE001 -- a raising step is a finding
        return Found(STEP_RAISED, f"{action.describe()}: {type(e).__name__}: {e}"), view
    if checks is None:
        return None, view
    after = checks.view(world)
    found = checks.on_edge(view, after, cov=cov) or checks.on_state(after)
    _cover(checks, after, cov)
    return found, after


def _cover(checks: Checks | None, view: object, cov: Coverage | None) -> None:
    """Count a setup state's invariant coverage (``coverage``): the setup is a path the
    cluster takes too, and every engine runs it the same way."""
    if cov is not None and checks is not None:
        cov.state(checks.state_mask(view))
