"""``RaftDriver`` carries out every effect type through its one table, in order."""

from __future__ import annotations

import inspect

import fsm.raft.effects as effects_module
from fsm.raft.driver import EFFECTS, RaftDriver, RaftPort
from fsm.raft.events import ClientAppend, Flushed, Start, TimerFired
from fsm.raft.log_summary import LogSummary, QuorumState
from tests.unit.raft.helpers import make


def effect_classes() -> set[type]:
    return {c for _, c in inspect.getmembers(effects_module, inspect.isclass)
            if c.__module__ == effects_module.__name__}


def test_every_effect_type_has_a_port_method():
    assert set(EFFECTS) == effect_classes()
    port_methods = {n for n, _ in inspect.getmembers(RaftPort, inspect.isfunction)
                    if not n.startswith("_")}
    assert len(port_methods) == len(EFFECTS)


class Recorder:
    """A port that records each call by name."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, object]] = []

    def __getattr__(self, name: str):
        return lambda effect: self.calls.append((name, effect))


def test_the_driver_hands_each_effect_to_its_port_method_in_order():
    node, _ = make(1, voters=(1,))
    fresh = type(node)(node.config, QuorumState(), LogSummary())
    port = Recorder()
    driver = RaftDriver(fresh.handle, port)
    driver.process(Start())
    names = [n for n, _ in port.calls]
    assert names == ["arm_timer", "cancel_timer", "persist_quorum_state", "role_changed",
                     "persist_quorum_state", "role_changed", "append_batches", "flush"]
    port.calls.clear()
    driver.process(Flushed(1))
    assert [n for n, _ in port.calls] == ["high_watermark"]
    port.calls.clear()
    driver.process(ClientAppend(0, 1, ("x",)))
    assert [n for n, _ in port.calls] == ["append_refused"]
    assert fresh.handle(TimerFired("election")) == []  # not armed any more: stale
