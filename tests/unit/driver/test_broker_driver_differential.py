"""The live broker process and the world run one broker driver: given the same events, what
each shell does with the broker core's effects -- ZooKeeper writes (op by op), the metadata
read, the registration, responses to the controller, the ControlledShutdown sent, timers
started and cancelled, the exit -- is the same, in the same order.

Live: a real ``BrokerExecutor`` (its event loop run on the test's thread, ``_run`` until a
stop marker) over its ``ExecutorPort``, its controller requests through a real
``BrokerRequestHandler`` (the wire conversion left out: the request and the response as
values), the handler's other effects handed to the executor (``execute_later``), as the
broker process wires them. Its bindings -- the registrar and its writer, the metadata reader,
timers, the ControlledShutdown sender, ``on_exit`` -- are recorders over a copy of the world's
ZooKeeper. World: a copy of the same state and its port (``WorldBrokerPort``, through
``executor.handle_broker``, as the world's steps call it), observed where its effects land
(ZooKeeper calls, channels, timers, the exit).

The events are those broker ``B``'s core met in a seeded random walk of a small cluster (the
controller's requests with their senders, ISR changes, timers, a SIGTERM and a second one,
the ControlledShutdown answers), up to the end of that incarnation; both shells then start
from the walk's first state and get the same events one by one.
"""

from __future__ import annotations

import random
import threading
from typing import Any

import pytest

from adapters.broker import effects as live_effects
from adapters.broker.effects import BrokerExecutor
from adapters.network import broker_handler
from adapters.network.broker_handler import BrokerRequestHandler
from fsm import zk_paths as P
from fsm.driver import BrokerDriver
from fsm.events import (
    RequestReceived,
    WriteFailure,
)
from fsm.requests import LeaderAndIsrRequest, StopReplicaRequest, UpdateMetadataRequest
from fsm.znodes import BrokerRegistration
from model_check.scenario import loads
from model_check.start import start
from model_check.world import actions as A
from model_check.world import executor as X
from model_check.world import reads as R
from model_check.world.broker_port import WorldBrokerPort
from model_check.world.channels import RESPONSE, SHUTDOWN
from model_check.world.cores import broker_config, restore_broker
from model_check.world.world import World
from model_check.world.zookeeper import ZooKeeper

B = 2  # the broker under test
SCENARIO = """
brokers = 3
depth = 1
init = "empty"
[world]
controlled_shutdown_max_retries = 2
[[topics]]
name = "t"
partitions = 2
replication_factor = 3
[[topics]]
name = "u"
partitions = 1
replication_factor = 2
[faults]
isr_changes = 30
connection_drops = 8
controller_session_expiry = 3
[[admin]]
op = "controlled-shutdown"
broker = 2
[[admin]]
op = "stop"
broker = 2
[[admin]]
op = "reassign"
partition = "u-0"
replicas = [2, 3]
"""

_SKIPPED = frozenset({A.CRASH, A.RESTART, A.EXPIRE_BROKER, A.SESSION_LOST, A.ZK_DISCONNECT,
                      A.RECONNECT, A.BROKER_IO})
"""Actions left out of the walks: they end the incarnation or cut its ZooKeeper connection,
which the live recorders below do not model (the world's own tests cover them)."""
_RARE = frozenset({A.ISR_CHANGE, A.DROP, A.EXPIRE_CONTROLLER, A.TIMER})
"""Taken now and then, the admin ops seldom (else a SIGTERM comes first: a short walk)."""


# ---------------------------------------------------------------- the live side


class _Writer:
    """``ZkWriter.execute_unfenced_ops`` over a ZooKeeper copy: each op on its own, the
    failures with the znode's current data and version, as the live writer describes them."""

    def __init__(self, zk: ZooKeeper, out: list) -> None:
        self.zk = zk
        self.out = out

    def execute_unfenced_ops(self, ops: Any) -> tuple[list[WriteFailure], list[str]]:
        failures, created = [], []
        for op in ops:
            self.out.append(("zk", op))
            r = self.zk.multi((op,))
            created.append(r.results[0].path)
            if not r.ok:
                node = self.zk.get(op.path)
                failures.append(WriteFailure(op.path, r.results[0].code,
                                             None if node is None else node.data,
                                             -1 if node is None else node.version))
        return failures, created


class _Registrar:
    """``BrokerRegistrar``: ``register`` creates ``/brokers/ids/B`` with the broker's session
    (epoch: its czxid); ``execute`` is the registrar's own."""

    execute = live_effects.BrokerRegistrar.execute

    def __init__(self, zk: ZooKeeper, session: int, registration: BrokerRegistration,
                 out: list) -> None:
        self.zk, self.session, self.registration, self.out = zk, session, registration, out
        self.broker_id = B
        self.writer = _Writer(zk, out)
        self.client = None

    def register(self, timeout: float) -> int:
        if not self.zk.alive(self.session):
            self.session = self.zk.open_session()
        r = self.zk.create(P.broker(B), self.registration, session=self.session,
                           ephemeral=True)
        self.out.append(("register", r.code))
        node = self.zk.get(P.broker(B))
        return node.czxid  # type: ignore[union-attr]


class _Reader:
    def __init__(self, zk: ZooKeeper, out: list) -> None:
        self.zk, self.out = zk, out

    def broker_metadata(self) -> object:
        self.out.append(("load",))
        return R.broker_metadata(self.zk)


class _Timers:
    def __init__(self, out: list) -> None:
        self.out = out

    def start(self, kind: Any, delay_ms: int) -> None:
        self.out.append(("timer", kind.value))

    def cancel(self, kind: Any) -> None:
        self.out.append(("cancel", kind.value))

    def cancel_all(self) -> None:
        pass


class _Live:
    """The broker process's event thread and request handler, recorded into ``out``; its
    ZooKeeper bindings act on ``zk``, a copy of the world's taken before each event."""

    def __init__(self, w: World) -> None:
        self.out: list = []
        out = self.out
        config = w.config
        zk = ZooKeeper()
        cfg = broker_config(config, B)
        self.core = restore_broker(w.broker_snapshot(B), config, B)
        lock = threading.Lock()
        registrar = _Registrar(zk, w.procs[B].broker_session,
                               BrokerRegistration(B, cfg.endpoints, cfg.rack), out)
        ex = BrokerExecutor.__new__(BrokerExecutor)
        BrokerExecutor.__init__(ex, B, lambda: self.core, lock,
                                _NoClient(registrar),  # type: ignore[arg-type]
                                client_listener="PLAINTEXT",
                                on_exit=lambda: out.append(("exit",)),
                                on_fatal=lambda why: out.append(("fatal", why)))
        ex.registrar = registrar  # type: ignore[assignment]
        ex.reader = _Reader(zk, out)  # type: ignore[assignment]
        ex.timers = _Timers(out)  # type: ignore[assignment]
        ex._send_controlled_shutdown = (  # type: ignore[method-assign]
            lambda request: out.append(("cs", request.broker_epoch)))
        self.executor = ex
        self.handler = BrokerRequestHandler(self.core, lock=lock,
                                            on_effects=ex.execute_later)
        self.handler.core = self.core

    def give(self, event: object, zk: ZooKeeper) -> None:
        ex = self.executor
        ex.registrar.zk = ex.registrar.writer.zk = ex.reader.zk = zk  # type: ignore[attr-defined]
        if type(event) is RequestReceived:
            response = self.handler._controller_request(_API[type(event.request)],
                                                        event.request)  # type: ignore[arg-type]
            self.out.append(("respond", response))
        else:
            ex.submit(event)
        ex._queue.put(live_effects._STOP)
        ex._run()  # the event thread, here, until the stop marker


class _NoClient:
    """What ``BrokerExecutor.__init__`` reads of its registrar (its reader's client)."""

    def __init__(self, registrar: _Registrar) -> None:
        self.client = registrar.client


_API = {LeaderAndIsrRequest: 4, StopReplicaRequest: 5, UpdateMetadataRequest: 6}


@pytest.fixture(autouse=True)
def _values_not_wire(monkeypatch: pytest.MonkeyPatch) -> None:
    """The handler takes the request as a value and answers the response as one (the wire
    codec has its own tests)."""
    for key in list(broker_handler._FROM_WIRE):
        monkeypatch.setitem(broker_handler._FROM_WIRE, key, lambda body: body)
    monkeypatch.setattr(broker_handler.C, "controller_response_to_wire", lambda r: r)


# ---------------------------------------------------------------- the world side


class _Timerset(set):
    def __init__(self, out: list, items: set) -> None:
        super().__init__(items)
        self.out = out

    def add(self, t: tuple) -> None:
        if t[0] == B and t[1] == "b":
            self.out.append(("timer", t[2]))
        set.add(self, t)

    def discard(self, t: tuple) -> None:
        if t[0] == B and t[1] == "b":
            self.out.append(("cancel", t[2]))
        set.discard(self, t)


class _ObservedWorld(World):
    """A world whose timer set stays recorded when it is replaced (an exit)."""

    @property
    def timers(self) -> set:  # type: ignore[override]
        return self.__dict__["_timers"]  # type: ignore[no-any-return]

    @timers.setter
    def timers(self, value: set) -> None:
        self.__dict__["_timers"] = value if isinstance(value, _Timerset) \
            else _Timerset(self.__dict__["_out"], value)


class _Quiet(list):
    """Where the world's records go outside broker ``B``'s steps."""

    def append(self, item: object) -> None:
        pass


def _observe(w: World) -> None:
    """Record into ``w.__dict__["_out"]`` what broker ``B``'s port does: its ZooKeeper calls
    (the writes op by op, the registration, the metadata read), its timers, the responses and
    the ControlledShutdown it puts on the channels, and its lines (``_Lines``)."""
    timers = w.__dict__.pop("timers")
    w.__class__ = _ObservedWorld
    w.__dict__["_out"] = _Quiet()
    w.timers = timers
    zk_call, zk_read, ch_send = w.zk_call, w.zk_read, w.ch_send

    def out() -> list:
        return w.timers.out  # type: ignore[attr-defined,no-any-return]

    def call(fn: Any, *args: Any, **kw: Any) -> Any:
        if fn is ZooKeeper.multi and len(args) == 1:  # the broker's writes, op by op
            for op in args[0]:
                out().append(("zk", op))
        r = zk_call(fn, *args, **kw)
        if fn is ZooKeeper.create and args and args[0] == P.broker(B):
            out().append(("register", r.code))
        return r

    def read(fn: Any, *args: Any) -> Any:
        if fn is R.broker_metadata:
            out().append(("load",))
        return zk_read(fn, *args)

    def send(key: Any, message: Any) -> None:
        if key.kind == RESPONSE and key.src == B:
            out().append(("respond", message[1].response))
        elif key.kind == SHUTDOWN and key.src == B:
            out().append(("cs", message[0]))
        ch_send(key, message)

    w.zk_call = call  # type: ignore[method-assign]
    w.zk_read = read  # type: ignore[method-assign]
    w.ch_send = send  # type: ignore[method-assign]


class _Lines(list):
    """Broker ``B``'s lines of one step: its exit, and a ControlledShutdown that found no
    controller to go to (the live sender finds none either: it answers itself)."""

    def __init__(self, w: World, lines: list[str]) -> None:
        super().__init__()
        self.w, self.lines = w, lines

    def append(self, line: str) -> None:
        out = self.w.timers.out  # type: ignore[attr-defined]
        if line == f"b{B} exit":
            out.append(("exit",))
        elif line.startswith(f"b{B} ControlledShutdown lost"):
            out.append(("cs", self.w.brokers[B].epoch))  # type: ignore[attr-defined]
        self.lines.append(line)


# ---------------------------------------------------------------- the runs


def _run(seed: int, steps: int = 1500) -> tuple[list, list, int]:
    """A seeded walk; every event broker ``B``'s core meets in it (one incarnation) is
    handed to the world's shell (the walk's own step) and, first, to the live shell over a
    copy of the world's ZooKeeper as it is then. Returns what each did and the events."""
    st = start(loads(SCENARIO))
    w = World.restore(st.snapshot, st.config)
    _observe(w)
    world: list = []
    shell: list[_Live] = []
    events = 0

    def handle(w: World, b: int, event: object, reply_to: int | None = None,
               request: Any = None) -> list[str]:
        nonlocal events
        if b != B or (shell and ("exit",) in shell[0].out):
            return original(w, b, event, reply_to, request)
        if not shell:
            shell.append(_Live(w))
        events += 1
        live = shell[0]
        live.executor.registrar.session = w.procs[B].broker_session  # type: ignore[attr-defined]
        live.give(event, World.restore(w.snapshot(), w.config).zk)
        w.timers.out = world  # type: ignore[attr-defined]
        try:
            return original(w, b, event, reply_to, request)  # the world's step, its port
        finally:
            w.timers.out = _Quiet()  # type: ignore[attr-defined]

    def driver_for(w: World, b: int, lines: list[str], reply_to: int | None = None,
                   request: Any = None) -> BrokerDriver:
        if b == B:
            lines = _Lines(w, lines)
        return BrokerDriver(WorldBrokerPort(w, b, lines, reply_to, request))

    rng = random.Random(seed)
    original, original_driver = X.handle_broker, X.broker_driver_for
    X.handle_broker = handle  # type: ignore[assignment]
    X.broker_driver_for = driver_for  # type: ignore[assignment]
    try:
        for _ in range(steps):
            actions = [a for a in w.enabled_actions() if a.kind not in _SKIPPED]
            if not actions or (shell and not w.procs[B].up):  # that incarnation is over
                break
            common = [a for a in actions if a.kind not in _RARE and a.kind != A.ADMIN]
            rare = [a for a in actions if a.kind in _RARE]
            admin = [a for a in actions if a.kind == A.ADMIN]
            r = rng.random()
            if admin and (r < 0.004 or not (common or rare)):
                action = rng.choice(admin)
            elif rare and (r < 0.03 or not common):
                action = rng.choice(rare)
            else:
                action = rng.choice(common)
            w.apply(action, describe=False)
    finally:
        X.handle_broker = original  # type: ignore[assignment]
        X.broker_driver_for = original_driver  # type: ignore[assignment]
    return (shell[0].out if shell else []), world, events


SEEDS = range(16)


@pytest.mark.parametrize("seed", SEEDS)
def test_live_and_world_broker_shells_do_the_same_with_the_same_events(seed: int) -> None:
    live, world, events = _run(seed)
    assert events >= 3 and live == world


def test_the_walks_reach_every_kind_of_effect() -> None:
    kinds = {e[0] for seed in SEEDS for e in _run(seed)[0]}
    assert kinds >= {"load", "register", "zk", "respond", "cs", "timer", "cancel", "exit"}, \
        kinds


def test_a_reordered_or_skipped_effect_is_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    """In the world's port, the ControlledShutdown sent after the retry timer that follows
    it is started (two effects swapped), or a timer cancel skipped: the test sees it."""

    def differ() -> bool:
        return any(live != world for live, world, _n in (_run(seed) for seed in SEEDS))

    assert not differ()
    send, start_timer = WorldBrokerPort.send_controlled_shutdown, WorldBrokerPort.start_timer
    held: list = []

    def hold(port: WorldBrokerPort, effect: Any) -> object | None:
        held.append(effect)
        return None

    def start_then_send(port: WorldBrokerPort, effect: Any) -> object | None:
        out = start_timer(port, effect)
        while held:
            send(port, held.pop(0))
        return out

    monkeypatch.setattr(WorldBrokerPort, "send_controlled_shutdown", hold)
    monkeypatch.setattr(WorldBrokerPort, "start_timer", start_then_send)
    assert differ()
    monkeypatch.setattr(WorldBrokerPort, "send_controlled_shutdown", send)
    monkeypatch.setattr(WorldBrokerPort, "start_timer", start_timer)
    assert not differ()
    monkeypatch.setattr(WorldBrokerPort, "cancel_timer", lambda port, effect: None)
    assert differ()
