"""A world kind small enough to count by hand, for the object-world engines' tests: two
counters below ``top``; ``inc-a``, ``inc-b`` and, when they are equal and not zero,
``reset``. A state whose sum is ``bad_sum`` breaks the state invariant ``toy-sum``; a step
into a state whose sum is ``raise_at`` raises; a step that lowers ``a`` by more than ``max_drop``
breaks the transition invariant ``toy-drop``."""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass

from model_check.objects.kind import Start, WorldKind


@dataclass(frozen=True)
class ToyScenario:
    name: str = "toy"
    top: int = 4
    depth: int = 20
    max_states: int = 1000
    bad_sum: int = -1
    raise_at: int = -1
    max_drop: int = 99


@dataclass(frozen=True)
class ToyAction:
    kind: str

    def describe(self) -> str:
        return self.kind


class ToyWorld:
    def __init__(self, sc: ToyScenario, a: int = 0, b: int = 0) -> None:
        self.sc, self.a, self.b = sc, a, b

    def snapshot(self) -> ToyWorld:
        return ToyWorld(self.sc, self.a, self.b)

    def key(self) -> int:
        return hash((self.a, self.b))

    def enabled_actions(self) -> list[ToyAction]:
        out = []
        if self.a < self.sc.top:
            out.append(ToyAction("inc-a"))
        if self.b < self.sc.top:
            out.append(ToyAction("inc-b"))
        if self.a == self.b > 0:
            out.append(ToyAction("reset"))
        return out

    def apply(self, action: ToyAction) -> None:
        if action.kind == "reset":
            self.a = self.b = 0
        elif action.kind == "inc-a":
            self.a += 1
        else:
            self.b += 1
        if self.a + self.b == self.sc.raise_at:
            raise RuntimeError(f"sum {self.sc.raise_at}")


def _check_state(view: tuple[int, int, ToyScenario]) -> tuple[str, str] | None:
    a, b, sc = view
    bad = sc.bad_sum
    return ("toy-sum", f"{a}+{b}") if a + b == bad else None


def _check_edge(before: tuple[int, int, ToyScenario], after: tuple[int, int, ToyScenario]
                ) -> tuple[str, str] | None:
    drop = before[0] - after[0]
    return ("toy-drop", f"{before[0]}->{after[0]}") if drop > before[2].max_drop else None


TOY = WorldKind(
    name="toy", load=lambda name: ToyScenario(name), names=lambda: ["toy"],
    title=lambda sc: "toy: two counters",
    start=lambda sc, reached: Start(ToyWorld(sc), (), None),
    restore=lambda snap: snap.snapshot(), watch=lambda w, reached: None,
    view_of=lambda w: (w.a, w.b, w.sc), check_state=_check_state,
    check_edge=_check_edge, describe=lambda a, sc: a.describe(),
    is_fault=lambda a: a.kind == "reset", patched=lambda name: nullcontext(),
    coverage_lines=lambda reached: [], coverage_unreached=lambda reached: [])
