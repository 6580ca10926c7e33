"""Step-by-step runner: one line per step (TigerBeetle style).

``python -m model_check.world.runner [--brokers N] [--topic t 0:1,2,3 ...]`` starts a
cluster, runs it to quiescence with the deterministic policy and prints every step.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from model_check.world import actions as A
from model_check.world.config import CreateTopic, WorldConfig
from model_check.world.world import World

MAX_TIMERS_PER_RUN = 4
"""Timer firings one ``run`` allows (a timer that re-arms while blocked is a fixpoint)."""


def next_progress(world: World, timers: bool = True,
                  skip: frozenset[str] = frozenset()) -> A.Action | None:
    """The fixed policy: the first enabled progress action (commit, process, notify,
    deliver, session-lost, in that order); when none is left, the first timer that still
    matters (``World.timer_matters``)."""
    enabled = world.enabled_actions()
    for a in enabled:
        if a.kind in A.PROGRESS and a.kind not in skip:
            return a
    if timers:
        for a in enabled:
            if a.kind == A.TIMER:
                role, kind = a.arg  # type: ignore[misc]
                if world.timer_matters((a.broker, role, kind.value)):
                    return a
    return None


class Runner:
    """Applies actions to a world and prints (or collects) one line per step."""

    def __init__(self, world: World, out: Callable[[str], None] = print) -> None:
        self.world = world
        self.step = 0
        self.out = out

    def do(self, action: A.Action) -> list[str]:
        self.step += 1
        lines = self.world.apply(action)
        head = f"{self.step:>4} {action.describe():<34}"
        if not lines:
            self.out(head.rstrip())
        for i, line in enumerate(lines):
            self.out((head if i == 0 else " " * len(head)) + " " + line)
        return lines

    def run(self, max_steps: int = 2000, timers: bool = True,
            skip: frozenset[str] = frozenset()) -> int:
        """Apply the policy until nothing is left; returns the number of steps."""
        n = 0
        fired = 0
        while True:
            a = next_progress(self.world, timers and fired < MAX_TIMERS_PER_RUN, skip)
            if a is None:
                return n
            fired += a.kind == A.TIMER
            n += 1
            assert n <= max_steps, f"not quiescent after {max_steps} steps"
            self.do(a)

    def start_all(self) -> None:
        for a in self.world.enabled_actions():
            if a.kind == A.START:
                self.do(a)


def parse_assignment(parts: list[str]) -> tuple[tuple[int, tuple[int, ...]], ...]:
    out = []
    for part in parts:
        p, replicas = part.split(":")
        out.append((int(p), tuple(int(r) for r in replicas.split(","))))
    return tuple(sorted(out))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m model_check.world.runner")
    ap.add_argument("--brokers", type=int, default=3)
    ap.add_argument("--topic", nargs="+", action="append", default=[],
                    metavar="NAME P:R,R,R", help="a topic to create once the cluster runs")
    args = ap.parse_args(argv)
    admin = tuple(CreateTopic(t[0], parse_assignment(t[1:])) for t in args.topic)
    world = World(WorldConfig(brokers=args.brokers, admin=admin))
    runner = Runner(world)
    runner.start_all()
    runner.run()
    for i in range(len(admin)):
        runner.do(A.Action(A.ADMIN, 0, i))
        runner.run()
    print(f"quiescent={world.is_quiescent()} controller={world.active_controller()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
