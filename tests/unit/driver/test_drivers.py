"""The drivers' rules, over ports that record: one write in flight and its result first,
``LoadCluster`` read after it, the bounced broker announced again; the broker core's rounds,
its writes together, nothing once halted."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from fsm.driver import MAX_ROUNDS, BrokerDriver, ControllerDriver
from fsm.effects import (
    BrokerZkWrite,
    CancelTimer,
    LoadCluster,
    Register,
    RemoveBrokerChannel,
    SendRequest,
    StartTimer,
    ZkWrite,
)
from fsm.events import (
    BrokerChange,
    BrokerRegistered,
    BrokerWriteResult,
    ClusterLoaded,
    TimerFired,
    TimerKind,
    WriteResult,
)
from fsm.reads.markers import LOAD_MARKER
from fsm.values import BrokerInfo, ClusterSnapshot

WRITE = ZkWrite(7, (), 0)
LOADED = ClusterLoaded(ClusterSnapshot((BrokerInfo(1, 5),)))


class Port:
    """A controller port that records every call; ``sync``: writes answer at once."""

    def __init__(self, sync: bool) -> None:
        self.sync = sync
        self.calls: list[tuple] = []

    def write(self, write: ZkWrite) -> WriteResult | None:
        self.calls.append(("write", write.token))
        return WriteResult(write.token) if self.sync else None

    def read(self, marker: Any) -> object | None:
        self.calls.append(("read", marker.kind))
        return LOADED

    def defer(self, items: Sequence[object]) -> None:
        self.calls.append(("defer", *items))

    def __getattr__(self, name: str) -> Any:
        return lambda *args: self.calls.append((name, *args))


def _step(script: dict[type, list[object]]) -> Any:
    handed: list[object] = []

    def step(event: object) -> list[object]:
        handed.append(event)
        return script.get(type(event), [])

    step.handed = handed  # type: ignore[attr-defined]
    return step


@pytest.mark.parametrize("sync", [True, False])
def test_the_write_result_comes_first_and_the_load_after_it(sync: bool) -> None:
    step = _step({TimerFired: [WRITE, LoadCluster(), SendRequest(2, "r")]})  # type: ignore[arg-type]
    port = Port(sync)
    d = ControllerDriver(step, port)
    d.process(TimerFired(TimerKind.DELETION_RETRY))
    if not sync:
        assert d.awaiting_write and port.calls == [
            ("write", 7), ("send", SendRequest(2, "r")), ("defer", LOAD_MARKER)]  # type: ignore[arg-type]
        with pytest.raises(AssertionError):
            d.process(TimerFired(TimerKind.DELETION_RETRY))
        d.write_done(WriteResult(7))
        d.process(LOAD_MARKER)  # the shell hands the deferred marker next
    assert not d.awaiting_write
    assert step.handed == [TimerFired(TimerKind.DELETION_RETRY), WriteResult(7), LOADED]
    assert [c for c in port.calls if c[0] in ("write", "read")] == [("write", 7), ("read", "load")]
    assert ("announce_brokers", LOADED.snapshot.live_brokers) in port.calls


def test_a_bounced_broker_is_announced_again_after_its_channel_is_removed() -> None:
    live = (BrokerInfo(1, 5), BrokerInfo(2, 9))
    step = _step({BrokerChange: [RemoveBrokerChannel(2), RemoveBrokerChannel(3)]})
    port = Port(True)
    ControllerDriver(step, port).process(BrokerChange(live))
    assert port.calls == [("announce_brokers", live), ("remove_broker_channel", 2),
                          ("announce_brokers", live), ("remove_broker_channel", 3)]


def test_a_loop_of_follow_ups_is_bounded() -> None:
    step = _step({ClusterLoaded: [LoadCluster()]})
    with pytest.raises(AssertionError, match="rounds"):
        ControllerDriver(step, Port(True)).process(LOADED)


class BPort:
    may_halt = True

    def __init__(self) -> None:
        self.calls: list[tuple] = []
        self.stop_after: int | None = None

    def step(self, events: Sequence[object]) -> list[object]:
        self.calls.append(("step", *events))
        out: list[object] = []
        for ev in events:
            if isinstance(ev, TimerFired):
                out += [BrokerZkWrite(1, ()), BrokerZkWrite(2, ()), StartTimer(ev.kind, 5),
                        BrokerZkWrite(3, ()), Register()]
        return out

    def halted(self) -> bool:
        return self.stop_after is not None and len(self.calls) >= self.stop_after

    def write(self, writes: Sequence[BrokerZkWrite]) -> list[BrokerWriteResult]:
        self.calls.append(("write", *(w.token for w in writes)))
        return [BrokerWriteResult(w.token, ()) for w in writes]

    def register(self, effect: Register) -> object | None:
        self.calls.append(("register",))
        return BrokerRegistered(11)

    def start_timer(self, effect: StartTimer) -> object | None:
        self.calls.append(("timer",))
        return None

    def cancel_timer(self, effect: CancelTimer) -> object | None:
        return None


def test_the_broker_driver_goes_in_rounds_with_its_writes_together() -> None:
    port = BPort()
    BrokerDriver(port).process((TimerFired(TimerKind.CONTROLLED_SHUTDOWN_RETRY),))  # type: ignore[arg-type]
    assert port.calls == [
        ("step", TimerFired(TimerKind.CONTROLLED_SHUTDOWN_RETRY)),
        ("write", 1, 2), ("timer",), ("write", 3), ("register",),
        ("step", BrokerWriteResult(1, ()), BrokerWriteResult(2, ()), BrokerWriteResult(3, ()),
         BrokerRegistered(11)),
    ]


def test_the_broker_driver_does_nothing_more_once_halted() -> None:
    port = BPort()
    port.stop_after = 2
    BrokerDriver(port).process((TimerFired(TimerKind.CONTROLLED_SHUTDOWN_RETRY),))  # type: ignore[arg-type]
    # halted is asked before each effect but a write (as the live executor did)
    assert port.calls == [("step", TimerFired(TimerKind.CONTROLLED_SHUTDOWN_RETRY)),
                          ("write", 1, 2), ("timer",)]
    assert MAX_ROUNDS == 64
