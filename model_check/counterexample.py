"""Counterexamples: rebuild a trace by replaying its actions, and save it three ways.

A violation carries the setup actions and the action *indices* chosen after it (index into
``enabled_actions()`` of each state on the path). ``rebuild`` replays them through a fresh
world -- the same code path as the search -- collecting ``apply()``'s one-line descriptions.
Saved as:

* ``<name>.txt``  one line per step (the step's action, then what happened, indented);
* ``<name>.md``   a Mermaid sequence diagram (ZooKeeper, controllers c1.., brokers b1..);
* ``<name>.replay.json``  the scenario's TOML text and each step's action description
  (``kcontrol replay`` matches it against the enabled actions, so a file stays readable
  and fails loudly if the world changed under it).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from model_check.checks import STEP_RAISED, Checks, Found
from model_check.graph import CANNOT_RECOVER
from model_check.scenario import Scenario, loads
from model_check.world import World
from model_check.world import actions as A

REPLAY_FORMAT = "kcontrol-replay/1"


@dataclass(frozen=True)
class Step:
    n: int
    action: A.Action
    lines: tuple[str, ...]
    setup: bool

    def describe(self) -> str:
        return self.action.describe()


@dataclass(frozen=True)
class Trace:
    scenario: Scenario
    steps: tuple[Step, ...]
    invariant: str
    detail: str

    def explored(self) -> tuple[Step, ...]:
        return tuple(s for s in self.steps if not s.setup)

    def one_liners(self) -> list[str]:
        """The ``trace`` of the JSON report: one line per step, ``#n action: first effect``."""
        out = []
        for s in self.steps:
            tag = "setup " if s.setup else ""
            head = f"{s.n:>3} {tag}{s.describe()}"
            out.append(f"{head}: {s.lines[0]}" if s.lines else head)
        return out


def rebuild(scenario: Scenario, setup: tuple[A.Action, ...], path: tuple[int, ...],
            invariant: str, detail: str) -> Trace:
    world = World(scenario.world_config())
    steps: list[Step] = []
    for action in setup:
        steps.append(Step(len(steps) + 1, action, _apply(world, action), True))
    for index in path:
        actions = world.enabled_actions()
        assert index < len(actions), f"step {len(steps) + 1}: action #{index} is not enabled"
        steps.append(Step(len(steps) + 1, actions[index], _apply(world, actions[index]), False))
    return Trace(scenario, tuple(steps), invariant, detail)


def _apply(world: World, action: A.Action) -> tuple[str, ...]:
    try:
        return tuple(world.apply(action))
    except Exception as e:  # noqa: BLE001 -- the step that raised is the last one
        return (f"RAISED {type(e).__name__}: {e}",)


# ---------------------------------------------------------------- text


def text(trace: Trace) -> str:
    sc = trace.scenario
    out = [f"# counterexample: {trace.invariant}",
           f"# scenario {sc.name} ({sc.source}); {len(trace.steps)} steps, "
           f"{len(trace.explored())} after the setup",
           f"# {trace.detail}", ""]
    for s in trace.steps:
        tag = " (setup)" if s.setup else ""
        out.append(f"{s.n:>4} {s.describe()}{tag}")
        out.extend(f"       {line}" for line in s.lines)
    out.append(f"VIOLATED {trace.invariant}: {trace.detail}")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- Mermaid

_DELIVERY = {"req": ("c", "b"), "resp": ("b", "c"), "cs": ("b", "c"), "cs-reply": ("c", "b")}
"""A delivered message, by channel kind: (sender role, receiver role)."""
_ACTOR = re.compile(r"^(c|b)(\d+) ")
_TARGET = re.compile(r"-> (c|b)(\d+)\b")


def _arrow(line: str) -> tuple[str, str, str] | None:
    """(from, to, label) for a line, or None (a note on the actor)."""
    m = _ACTOR.match(line)
    if m is None:
        return None
    actor = f"{m.group(1)}{m.group(2)}"
    rest = line[m.end():]
    t = _TARGET.search(rest)
    if t is not None and (rest.startswith(("send", "respond", "reply")) or "send " in rest):
        return actor, f"{t.group(1)}{t.group(2)}", rest
    if rest.startswith(("commit", "zk ", "register")):
        return actor, "ZK", rest
    if rest.startswith("watch"):
        return "ZK", actor, rest
    return actor, actor, rest


def _label(s: str) -> str:
    return s.replace(";", ",").replace("#", "no.").replace(":", " ")[:140]


def mermaid(trace: Trace) -> str:
    n = trace.scenario.brokers
    out = [f"# Counterexample: `{trace.invariant}`", "",
           f"Scenario `{trace.scenario.name}`, {len(trace.steps)} steps "
           f"({len(trace.explored())} after the setup).", "",
           f"> {trace.detail}", "", "```mermaid", "sequenceDiagram",
           "    participant ZK as ZooKeeper"]
    out += [f"    participant c{b}" for b in range(1, n + 1)]
    out += [f"    participant b{b}" for b in range(1, n + 1)]
    for s in trace.steps:
        if s.setup:
            continue
        out.append(f"    Note over ZK,b{n}: {s.n}. {_label(s.describe())}")
        lines = list(s.lines)
        wire = _DELIVERY.get(getattr(s.action.arg, "kind", "")) if s.action.kind == A.DELIVER \
            else None
        if wire is not None and lines:
            key = s.action.arg
            out.append(f"    {wire[0]}{key.src}->>{wire[1]}{key.dst}: {_label(lines.pop(0))}")
        for line in lines:
            arrow = _arrow(line)
            if arrow is None:
                out.append(f"    Note over ZK: {_label(line)}")
            elif arrow[0] == arrow[1]:
                out.append(f"    Note over {arrow[0]}: {_label(arrow[2])}")
            else:
                out.append(f"    {arrow[0]}->>{arrow[1]}: {_label(arrow[2])}")
    out.append(f"    Note over ZK,b{n}: VIOLATED {_label(trace.invariant)}")
    out.append("```")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- replay files


def replay_doc(trace: Trace, engine: str = "local", mutant: str | None = None) -> dict:
    return {
        "format": REPLAY_FORMAT,
        "scenario": trace.scenario.name,
        "scenario_source": trace.scenario.source,
        "scenario_toml": trace.scenario.text,
        "engine": engine,
        "mutant": mutant,
        "invariant": trace.invariant,
        "detail": trace.detail,
        "steps": [{"n": s.n, "action": s.describe(), "setup": s.setup} for s in trace.steps],
    }


def save(trace: Trace, out_dir: Path, engine: str = "local",
         mutant: str | None = None) -> dict[str, Path]:
    """Write the three files; a mutant's name is part of the file names and of the replay
    file (``kcontrol replay`` applies it again)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    base = f"{trace.scenario.name}-{_slug(trace.invariant)}"
    if mutant:
        base = f"{trace.scenario.name}-{_slug(mutant)}-{_slug(trace.invariant)}"
    paths = {"text": out_dir / f"{base}.txt", "mermaid": out_dir / f"{base}.md",
             "replay": out_dir / f"{base}.replay.json"}
    paths["text"].write_text(text(trace))
    paths["mermaid"].write_text(mermaid(trace))
    paths["replay"].write_text(json.dumps(replay_doc(trace, engine, mutant), indent=2) + "\n")
    return paths


def _slug(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", s).strip("-") or "violation"


class ReplayError(ValueError):
    """A replay file that cannot be read, or whose step is no longer enabled."""


@dataclass(frozen=True)
class Replayed:
    steps: int
    found: Found | None
    expected: str | None

    @property
    def reproduced(self) -> bool:
        return self.found is not None and self.found.invariant == self.expected


def load_replay(path: Path) -> dict:
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise ReplayError(f"{path}: cannot read a replay file: {e}") from None
    if not isinstance(doc, dict) or doc.get("format") != REPLAY_FORMAT:
        raise ReplayError(f"{path}: not a {REPLAY_FORMAT} file")
    return doc


def replay(doc: dict, checks: Checks, out=print) -> Replayed:  # noqa: ANN001
    """Run the file's steps through a fresh world, re-checking every state and edge;
    stops at the first violation. A trace found on a mutant runs with that mutant applied
    (``doc["mutant"]``)."""
    from model_check import mutants

    name = doc.get("mutant")
    try:
        with mutants.patched(name):
            return _replay(doc, checks, out)
    except mutants.UnknownMutant as e:
        raise ReplayError(f"the trace names an unknown mutant: {e}") from None


def _replay(doc: dict, checks: Checks, out) -> Replayed:  # noqa: ANN001
    scenario = loads(doc["scenario_toml"], source=doc.get("scenario_source", "<replay>"),
                     name=doc.get("scenario", "replay"))
    expected = doc.get("invariant")
    world = World(scenario.world_config())
    view = checks.view(world)
    found = checks.on_state(view)
    n = 0
    for n, step in enumerate(doc["steps"], 1):
        if found is not None:
            break
        want = step["action"]
        match = [a for a in world.enabled_actions() if a.describe() == want]
        if not match:
            raise ReplayError(f"step {n}: {want!r} is not enabled here (the world or the "
                              f"scenario changed since the trace was saved)")
        out(f"{n:>4} {want}{' (setup)' if step.get('setup') else ''}")
        try:
            lines = world.apply(match[0])
        except Exception as e:  # noqa: BLE001 -- a raising step is a finding
            found = Found(STEP_RAISED, f"{want}: {type(e).__name__}: {e}")
            break
        for line in lines:
            out(f"       {line}")
        after = checks.view(world)
        found = checks.on_edge(view, after) or checks.on_state(after)
        view = after
    if found is None and expected == CANNOT_RECOVER:
        found = stuck_here(world, checks)
    return Replayed(n, found, expected)


def stuck_here(world: World, checks: Checks, limit: int = 200_000) -> Found | None:
    """Recoverability, judged again from the state a trace ends in: explore everything
    reachable from it (up to ``limit`` states); ``CANNOT_RECOVER`` when none of it is a
    quiescent, healthy state."""
    from model_check.graph import unhealthy
    from model_check.memo import Memos
    from model_check.search import expand
    from model_check.world import fingerprint

    config = world.config
    memos = Memos(config)
    snap = world.snapshot()
    view = checks.view(world)
    seen = {fingerprint(snap)}
    todo = [(snap, view)]
    first_reason = None
    while todo:
        snap, view = todo.pop()
        reason = unhealthy(view)
        if reason is None:
            return None
        if first_reason is None and not view.pending:
            first_reason = reason
        for s in expand(snap, config, checks, view, memos=memos):
            if s.snapshot is not None and s.fp not in seen:
                if len(seen) >= limit:
                    return None  # too much to judge here: not reproduced
                seen.add(s.fp)
                todo.append((s.snapshot, s.view))
    return Found(CANNOT_RECOVER, f"none of the {len(seen)} states reachable from here is "
                                 f"healthy: {first_reason or 'something stays in flight'}")
