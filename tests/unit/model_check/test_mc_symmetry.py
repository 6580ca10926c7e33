"""Symmetry reduction: renaming brokers commutes with every step of the real core, the class
key is the same for every renaming, the reduction keeps the verdict, and counterexamples found
with it replay."""

from __future__ import annotations

import itertools
import random

import pytest

from model_check import mutants
from model_check import symmetry as Y
from model_check.checks import default_checks
from model_check.counterexample import rebuild, replay, replay_doc
from model_check.scenario import load, loads
from model_check.search import Options, bfs
from model_check.start import start
from model_check.world import World, WorldConfig
from model_check.world import actions as A
from model_check.world.config import ControlledShutdownOf, CreateTopic, Reassign
from model_check.world.world import REST, world_layout

# every fault kind, a deletion and a preferred election: nothing names a broker
ALL_FREE = """
brokers = 3
depth = 10
symmetry = true
[world]
auto_leader_rebalance = false
[[topics]]
name = "t"
partitions = 1
replication_factor = 3
[faults]
broker_crash = 1
broker_restart = 1
controller_session_expiry = 1
broker_session_expiry = 1
isr_changes = 2
zookeeper_disconnects = 2
[[admin]]
op = "delete-topic"
topic = "t"
[[admin]]
op = "preferred-election"
partitions = ["t-0"]
"""


def _sampled_states(sc, walks: int, seed: int) -> list[tuple]:  # noqa: ANN001
    st = start(sc)
    rng = random.Random(seed)
    out = []
    for _ in range(walks):
        w = World.restore(st.snapshot, st.config)
        for _step in range(rng.randrange(3, 30)):
            acts = w.enabled_actions()
            if not acts:
                break
            w.apply(rng.choice(acts))
        out.append(w.snapshot())
    return out


def _successor_keys(snap: tuple, config: WorldConfig) -> list:
    keys = []
    for a in World.restore(snap, config).enabled_actions():
        c = World.restore(snap, config)
        try:
            c.apply(a)
        except Exception as e:  # noqa: BLE001 -- compared like any other outcome
            keys.append(("raised", type(e).__name__))
            continue
        keys.append(Y.canonical(c.snapshot(), config))
    return sorted(keys, key=repr)


@pytest.mark.parametrize("sc", [loads(ALL_FREE, name="all-free"), load("deep")],
                         ids=["all-free", "deep"])
def test_renaming_brokers_commutes_with_every_step(sc) -> None:  # noqa: ANN001
    """For sampled worlds s and renamings p of the free brokers: p(s) is a world the core
    runs (restore/snapshot round trip), has the key of s, the same verdict, and its
    successors have the keys of s's successors."""
    config = sc.world_config()
    checks = default_checks()
    tried = 0
    rest_at = world_layout(len(config.broker_ids)).rest
    for snap in _sampled_states(sc, walks=12, seed=5):
        free = [b for b in config.broker_ids
                if b not in Y.named_brokers(config, snap[rest_at][REST.admin])]
        want = _successor_keys(snap, config)
        verdict = checks.on_state(checks.view(World.restore(snap, config))) is None
        for p in itertools.permutations(free):
            perm = dict(zip(free, p, strict=True))
            moved = Y.relabel(snap, config, perm, tokens=False)
            w = World.restore(moved, config)
            assert w.snapshot() == moved
            assert Y.canonical(moved, config) == Y.canonical(snap, config)
            assert (checks.on_state(checks.view(w)) is None) == verdict
            assert _successor_keys(moved, config) == want, perm
            tried += 1
    assert tried > 20


def test_named_brokers_are_fixed() -> None:
    config = WorldConfig(brokers=4, admin=(
        CreateTopic("t", ((0, (1, 2)),)), Reassign(((("t", 0), (3, 1)),)),
        ControlledShutdownOf(4)))
    assert Y.named_brokers(config, ()) == {1, 2, 3, 4}
    assert Y.named_brokers(config, (0,)) == {1, 3, 4}
    assert Y.named_brokers(config, (0, 1, 2)) == set()


def test_a_crash_of_either_spare_broker_is_one_state() -> None:
    sc = load("symmetric")
    st = start(sc)

    def after(b: int) -> tuple:
        w = World.restore(st.snapshot, st.config)
        w.apply(A.Action(A.CRASH, b))
        return w.snapshot()

    s3, s4 = after(3), after(4)
    assert s3 != s4
    assert Y.canonical(s3, st.config) == Y.canonical(s4, st.config)
    assert Y.canonical(after(1), st.config) != Y.canonical(s3, st.config)  # 1 hosts a replica


def test_symmetry_reduces_and_keeps_the_verdict() -> None:
    sc = load("symmetric")
    plain = bfs(sc, default_checks(), Options(depth=6, symmetry=False))
    reduced = bfs(sc, default_checks(), Options(depth=6, symmetry=True))
    assert plain.verdict == reduced.verdict == "pass"
    assert reduced.symmetry == "on" and plain.symmetry == "off"
    assert reduced.distinct_states < 0.75 * plain.distinct_states


def test_a_counterexample_found_with_symmetry_is_real_and_replays() -> None:
    sc = load("mutants-restart")
    checks = default_checks()
    with mutants.patched("broker-ignores-broker-epoch"):
        plain = bfs(sc, checks, Options(symmetry=False))
        r = bfs(sc, checks, Options(symmetry=True))
        v = r.violation
        assert v is not None and plain.violation is not None
        assert v.invariant == plain.violation.invariant and v.depth == plain.violation.depth
        trace = rebuild(sc, v.setup, v.path, v.invariant, v.detail)
    again = replay(replay_doc(trace, mutant="broker-ignores-broker-epoch"), checks,
                   out=lambda _line: None)
    assert again.reproduced


def test_an_unknown_value_is_refused() -> None:
    r = Y._Renaming({1: 2, 2: 1})
    with pytest.raises(Y.SymmetryError, match="NoSuchClass"):
        r.value(("\x00NoSuchClass", 1))


def test_owed_decisions_are_renamed() -> None:
    """A decision owed to the next event (``ControllerContext.owed``) names a broker when it
    is a controlled shutdown's: renaming renames it, and the result is a controller again."""
    from fsm.controller import Controller, ControllerConfig

    ctl = Controller(ControllerConfig(broker_id=1))
    ctl.ctx.owed[("t", 0)] = ("shutdown", 2, True)
    ctl.ctx.owed[("t", 1)] = ("offline", 0, False)
    out = Y._Renaming({2: 3, 3: 2}).controller(ctl.snapshot())
    assert out[-1][-1] == ((("t", 0), ("shutdown", 3, True)), (("t", 1), ("offline", 0, False)))
    assert Controller.restore(out, ctl.config).ctx.owed[("t", 0)] == ("shutdown", 3, True)
