"""The KRaft search's start: with ``init = "running"``, every broker starts, registers and is
unfenced, and the scenario's topics are created, each phase run to quiescence by a fixed
progress policy (commit, deliver, fetch, and heartbeats of brokers not yet running) -- the
cluster a person would have before the faults begin. One fixed path, checked step by step.
On the Raft log (``log = "raft"``) the setup first elects voter 0 (``elect 0``: its election
timer fires, the voters' messages are delivered until none is left; a lone voter leads from
its start); its controller becomes active once its epoch's LeaderChange record is
committed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fsm.kraft.broker_lifecycle_states import KRaftBrokerState
from fsm.kraft.controller import requests as rq
from fsm.kraft.controller.events import ControllerRequest
from fsm.kraft.records.uuid import uuid_of
from model_check.kraft.raft_world import KRaftRaftWorld, new_world
from model_check.kraft.scenario import KRaftScenario
from model_check.kraft.world import KAction, KRaftWorld

MAX_SETUP_STEPS = 2000
PROGRESS = ("commit", "replicate", "deliver-request", "deliver-answer", "fetch")


def _progress(w: KRaftWorld) -> KAction | None:
    actions = w.enabled_actions()
    for kind in PROGRESS:
        for a in actions:
            if a.kind == kind:
                return a
    for a in actions:
        if a.kind == "heartbeat" and w.brokers[a.target].state is not KRaftBrokerState.RUNNING:
            return a
    return None


def setup(scenario: KRaftScenario, check_state: Callable[[Any], Any],
          check_edge: Callable[[Any, Any], Any], view_of: Callable[[KRaftWorld], Any],
          reached: set[tuple[str, ...]] | None = None
          ) -> tuple[KRaftWorld, tuple[KAction, ...], tuple[str, str] | None]:
    w = new_world(scenario, reached)
    done: list[KAction] = []
    view = view_of(w)
    found = check_state(view)

    def step(action: KAction | None, apply: Callable[[], None]) -> tuple[str, str] | None:
        nonlocal view
        if action is not None:
            done.append(action)
        try:
            apply()
        except Exception as e:  # noqa: BLE001 -- a raising step is a finding
            return "step-raised", f"setup: {type(e).__name__}: {e}"
        after = view_of(w)
        result = check_edge(view, after) or check_state(after)
        view = after
        return result

    def settle() -> tuple[str, str] | None:
        for _ in range(MAX_SETUP_STEPS):
            a = _progress(w)
            if a is None:
                return None
            bad = step(a, lambda a=a: w.apply(a))
            if bad is not None:
                return bad
        raise AssertionError(f"the KRaft setup did not settle in {MAX_SETUP_STEPS} steps")

    if found is None and isinstance(w, KRaftRaftWorld) and w.leader() is None:
        found = step(KAction("elect", 0), lambda: w.apply(KAction("elect", 0)))
    if found is None and scenario.init == "running":
        for b in sorted(w.brokers):
            found = found or step(KAction("start", b), lambda b=b: w.apply(KAction("start", b)))
        found = found or settle()
        for i, t in enumerate(scenario.topics):
            w.topic_ids += 1
            topic = rq.CreatableTopic(t.name, t.partitions, t.replication_factor,
                                      tuple(enumerate(t.assignment)))
            request = rq.CreateTopicsRequest((topic,), (uuid_of(w.topic_ids),))
            found = found or step(None, lambda i=i, r=request: w._controller(
                w.active, ControllerRequest(("setup", i), r)))
            found = found or settle()
    w.reached = None
    return w, tuple(done), found
