"""The live service and the world run one controller driver: given the same events, what
each shell does with the effects -- writes, requests, replies, channel removals, timers,
elections, resignations, requests dropped for an unknown broker -- is the same, in the same
order.

Live: a real ``ControllerService`` (never started: no ZooKeeper) whose bindings -- writer,
reader, channel manager, timers, ``/controller`` release -- are replaced by recorders; the
channel recorder keeps the live channel manager's rule (a removed broker is unknown until
announced again; a request to an unknown broker is dropped). World: a real ``World`` and its
port (``WorldControllerPort``), observed where its effects land (pending writes, channels,
timers, the lines of the drops, elections and resignations). Both read the same ZooKeeper
data (two copies of the world's) and get the same write results (seeded); the events are
seeded random: broker sets with deaths and bounces (same id, new epoch), timers, controlled
shutdowns, session moves, markers.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from adapters.controller.service import ControllerService
from fsm import zk_paths as P
from fsm.events import (
    BrokerChange,
    ControlledShutdown,
    SessionStateChange,
    Startup,
    TimerFired,
    TimerKind,
    WriteResult,
)
from fsm.reads.markers import BROKERS, CONTROLLER, DELETE_TOPICS, MARKERS, TOPICS, Marker
from fsm.requests import ControlledShutdownRequest
from fsm.values import BrokerInfo
from fsm.zk_session_states import ZkClientState
from model_check import mutants
from model_check.scenario import loads
from model_check.world import actions as A
from model_check.world import reads as R
from model_check.world import state as S
from model_check.world.channels import REQUEST, SHUTDOWN_REPLY, Channels
from model_check.world.controller_port import WorldControllerPort, driver_for
from model_check.world.executor import run_admin
from model_check.world.world import World

C = 1  # the controller candidate under test
SCENARIO = """
brokers = 3
depth = 1
[[topics]]
name = "t"
partitions = 2
replication_factor = 3
[[topics]]
name = "u"
partitions = 1
replication_factor = 2
"""


def _world() -> World:
    config = loads(SCENARIO).world_config()
    w = World(config)
    for b in config.broker_ids:
        w.apply(A.Action(A.START, b))
    for op in config.admin:
        run_admin(w, op)
    w.queues[C] = ()
    w.reset_controller(C)
    w.channels.bound = 10_000  # nothing is delivered here: requests pile up
    return w


def _results(seed: int) -> Any:
    """The same write results on both sides: success, now and then fenced."""
    rng = random.Random(seed * 7919)
    fenced: dict[int, bool] = {}

    def result(token: int) -> WriteResult:
        if token not in fenced:
            fenced[token] = rng.random() < 0.08
        return WriteResult(token, fenced=fenced[token])

    return result


# ---------------------------------------------------------------- the live side


class _Channels:
    """The channel manager's rules that matter here, recorded."""

    def __init__(self, out: list) -> None:
        self.out = out
        self.known: set[int] = set()

    def start(self, deliver: object) -> None:
        pass

    def brokers(self, live: tuple[BrokerInfo, ...]) -> None:
        self.known |= {info.broker_id for info in live}

    def send(self, broker_id: int, request: object) -> None:
        if broker_id not in self.known:
            self.out.append(("drop", broker_id))
        else:
            self.out.append(("send", broker_id, request))

    def reply_controlled_shutdown(self, broker_id: int, correlation: int,
                                  response: object) -> None:
        self.out.append(("reply", broker_id, correlation, response))

    def remove_broker(self, broker_id: int) -> None:
        self.known.discard(broker_id)
        self.out.append(("remove", broker_id))

    def reset(self) -> None:
        self.out.append(("reset",))

    def close(self) -> None:
        pass


class _Timers:
    def __init__(self, out: list) -> None:
        self.out = out

    def start(self, kind: TimerKind, delay_ms: int) -> None:
        self.out.append(("timer", kind.value))

    def cancel(self, kind: TimerKind) -> None:
        self.out.append(("cancel", kind.value))

    def cancel_all(self) -> None:
        pass  # the world drops its timers silently too (``executor.resign``)


def _live(w: World, result: Any) -> tuple[ControllerService, list]:
    out: list = []
    svc = ControllerService(C, "127.0.0.1:1")  # never started: no connection
    svc.channels = _Channels(out)  # type: ignore[assignment]
    svc.timers = _Timers(out)  # type: ignore[assignment]
    zk = World.restore(w.snapshot(), w.config).zk  # a copy of the world's ZooKeeper
    session = w.procs[C].controller_session

    def commit(write: Any) -> WriteResult:
        out.append(("write", write.token, write.ops, write.fence_version))
        return result(write.token)  # type: ignore[no-any-return]

    def materialize(m: Marker) -> object | None:  # ``ControllerService._materialize``
        ctl = svc.controller
        known = ctl.topic_names() if MARKERS[m.kind].reads_topics else frozenset()
        return R.materialize(zk, m, ctl.is_active, known, session)

    became, resigned = svc._became, svc._resigned

    def on_became(epoch: int) -> None:
        out.append(("became", epoch))
        became(epoch)

    def on_resigned(reason: str) -> None:
        out.append(("resigned",))
        resigned(reason)

    svc._commit = commit  # type: ignore[method-assign]
    svc._materialize = materialize  # type: ignore[method-assign]
    svc._became = on_became  # type: ignore[method-assign]
    svc._resigned = on_resigned  # type: ignore[method-assign]
    svc._release_controller = lambda: None  # type: ignore[method-assign]
    return svc, out


# ---------------------------------------------------------------- the world side


class _Writes(dict):
    def __init__(self, out: list) -> None:
        super().__init__()
        self.out = out

    def __setitem__(self, b: int, pw: S.PendingWrite) -> None:
        self.out.append(("write", pw.write.token, pw.write.ops, pw.write.fence_version))
        dict.__setitem__(self, b, pw)


class _Timerset(set):
    def __init__(self, out: list, items: set) -> None:
        super().__init__(items)
        self.out = out

    def add(self, t: tuple) -> None:
        self.out.append(("timer", t[2]))
        set.add(self, t)

    def discard(self, t: tuple) -> None:
        self.out.append(("cancel", t[2]))
        set.discard(self, t)


class _Lines(list):
    """The world's lines; the drops, elections and resignations recorded in order."""

    def __init__(self, out: list) -> None:
        super().__init__()
        self.out = out

    def append(self, line: str) -> None:
        if " dropped (unknown broker)" in line:
            self.out.append(("drop", int(line.split("-> b", 1)[1].split()[0])))
        elif " became controller epoch=" in line:
            self.out.append(("became", int(line.rsplit("=", 1)[1])))
        elif " resigned: " in line:
            self.out.append(("resigned",))
        list.append(self, line)


class _ObservedWorld(World):
    """A world whose timer set stays recorded when it is replaced (a resignation)."""

    @property
    def timers(self) -> set:  # type: ignore[override]
        return self.__dict__["_timers"]  # type: ignore[no-any-return]

    @timers.setter
    def timers(self, value: set) -> None:
        self.__dict__["_timers"] = value if isinstance(value, _Timerset) \
            else _Timerset(self.__dict__["_out"], value)


def _observe(w: World, out: list) -> None:
    """Record the world's effects where they land."""
    timers = w.__dict__.pop("timers")
    w.__class__ = _ObservedWorld
    w.__dict__["_out"] = out
    w.timers = timers
    w.writes = _Writes(out)
    ch_send, ch_call = w.ch_send, w.ch_call

    def send(key: Any, message: Any) -> None:
        if key.kind == REQUEST:
            out.append(("send", key.dst, message[1]))
        elif key.kind == SHUTDOWN_REPLY:
            out.append(("reply", key.dst, *message))
        ch_send(key, message)

    def call(fn: Any, *args: Any) -> Any:
        if fn is Channels.stop_sender:
            out.append(("reset",) if args[1] is None else ("remove", args[1]))
        return ch_call(fn, *args)

    w.ch_send = send  # type: ignore[method-assign]
    w.ch_call = call  # type: ignore[method-assign]


def _world_process(w: World, item: object, result: Any, out: list) -> None:
    lines = _Lines(out)
    driver_for(w, C, lines).process(item)
    while True:  # the world's commit steps and the work deferred behind them, at once
        if C in w.writes:
            pw = dict.pop(w.writes, C)
            driver_for(w, C, lines, pw.write.token).write_done(result(pw.write.token))
        elif w.queues[C]:
            head, w.queues[C] = w.queues[C][0], w.queues[C][1:]
            driver_for(w, C, lines).process(head)
        else:
            break


# ---------------------------------------------------------------- the events


def _events(w: World, rng: random.Random, n: int) -> list[object]:
    regs = {b: w.zk.get(P.broker(b)).czxid for b in w.config.broker_ids}
    epochs = dict(regs)
    events: list[object] = [Startup(), Marker(CONTROLLER)]
    for _ in range(n):
        r = rng.random()
        if r < 0.4:
            live = []
            for b in sorted(regs):
                if rng.random() < 0.2:
                    continue  # dead
                if rng.random() < 0.2:
                    epochs[b] += 1000  # bounced: same id, new epoch
                live.append(BrokerInfo(b, epochs[b]))
            events.append(BrokerChange(tuple(live)))
        elif r < 0.55:
            events.append(TimerFired(rng.choice([TimerKind.DELETION_RETRY,
                                                 TimerKind.AUTO_REBALANCE])))
        elif r < 0.7:
            b = rng.choice(sorted(regs))
            events.append(ControlledShutdown(ControlledShutdownRequest(b, epochs[b]),
                                             rng.randrange(100)))
        elif r < 0.78:
            events.append(SessionStateChange(rng.choice([ZkClientState.CONNECTING,
                                                         ZkClientState.CONNECTED])))
        elif r < 0.82:
            events += [SessionStateChange(ZkClientState.CLOSED), Startup(),
                       Marker(CONTROLLER)]
        else:
            events.append(Marker(rng.choice([BROKERS, TOPICS, DELETE_TOPICS, CONTROLLER])))
    return events


def _run(seed: int) -> tuple[list, list]:
    w = _world()
    events = _events(w, random.Random(seed), 40)
    svc, live = _live(w, _results(seed))
    world: list = []
    _observe(w, world)
    result = _results(seed)
    for ev in events:
        if svc.controller.paused and not isinstance(ev, SessionStateChange):
            continue  # both shells hold such events (the world: ``next_index``)
        svc.driver.process(ev)
        _world_process(w, ev, result, world)
    return live, world


SEEDS = range(16)


@pytest.mark.parametrize("seed", SEEDS)
def test_live_and_world_shells_do_the_same_with_the_same_events(seed: int) -> None:
    live, world = _run(seed)
    assert live == world


def test_the_sequences_reach_every_kind_of_effect() -> None:
    kinds = {e[0] for seed in SEEDS for e in _run(seed)[0]}
    assert kinds >= {"write", "send", "reply", "remove", "reset", "timer", "cancel", "became",
                     "resigned"}, kinds


def test_both_shells_drop_requests_to_a_forgotten_broker_alike() -> None:
    """With the bounced broker's announcement taken out of the driver (the mutant), the
    live channel manager and the world's both drop requests to the new incarnation."""
    with mutants.patched("bounced-broker-forgotten"):
        runs = [_run(seed) for seed in SEEDS]
    assert any(("drop" in {e[0] for e in live}) for live, _world in runs)
    for live, world in runs:
        assert live == world


def test_a_skipped_or_reordered_effect_is_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    original = WorldControllerPort.send
    held: list = []

    def swapped(port: WorldControllerPort, effect: Any) -> None:  # every two sends swapped
        if not held:
            held.append(effect)
            return
        original(port, effect)
        original(port, held.pop())

    monkeypatch.setattr(WorldControllerPort, "send", swapped)
    assert any(live != world for live, world in (_run(seed) for seed in SEEDS))
    monkeypatch.setattr(WorldControllerPort, "send", original)
    monkeypatch.setattr(WorldControllerPort, "cancel_timer", lambda port, effect: None)
    assert any(live != world for live, world in (_run(seed) for seed in SEEDS))
