"""The broker's ``isr_change`` admin op: a shrink holds the replicas it takes out (the ISR
expander keeps them out for ``hold`` seconds), an expansion holds nothing, bad input is
refused naming the fields."""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any

import pytest

from adapters.kraft_broker.admin_ops import DEFAULT_HOLD_S, broker_ops
from adapters.raft_node.admin import AdminError
from fsm.kraft.broker.events import IsrChangesWanted, IsrChangeWanted
from tests.unit.kraft.broker.walk import T1, running


def _ops() -> tuple[dict[str, Any], list[Any], list[Any]]:
    core, _ = running()  # broker 1 leads t1-0 [1, 2, 3], ISR [1, 2, 3]
    holds: list[Any] = []
    submitted: list[Any] = []

    def on_core(fn: Any) -> Future[Any]:
        f: Future[Any] = Future()
        f.set_result(fn(core))
        return f

    def submit(ev: object) -> bool:
        submitted.append(ev)
        return False  # "not running": the op stops right after submitting

    ops = broker_ops(on_core, dict, submit, lambda *a: holds.append(a))
    return ops, holds, submitted


def test_a_shrink_holds_the_replicas_it_takes_out() -> None:
    ops, holds, submitted = _ops()
    with pytest.raises(AdminError, match="not running"):
        ops["isr_change"]({"topic": "t1", "partition": 0, "isr": [1, 3], "hold": 5})
    assert holds == [((T1, 0), [2], 5.0)]
    assert submitted == [IsrChangesWanted((IsrChangeWanted(T1, 0, (1, 3)),))]
    with pytest.raises(AdminError):
        ops["isr_change"]({"topic": "t1", "partition": 0, "isr": [1]})
    assert holds[-1] == ((T1, 0), [2, 3], DEFAULT_HOLD_S)


def test_no_hold_for_an_expansion_or_hold_0_and_bad_holds_are_refused() -> None:
    ops, holds, _ = _ops()
    for req in ({"isr": [1, 2, 3]}, {"isr": [1], "hold": 0}):
        with pytest.raises(AdminError, match="not running"):
            ops["isr_change"]({"topic": "t1", "partition": 0, **req})
    assert holds == []
    for hold in (-1, 601, "10"):
        with pytest.raises(AdminError, match="hold"):
            ops["isr_change"]({"topic": "t1", "partition": 0, "isr": [1], "hold": hold})


def test_wait_offset_answers_once_the_offset_is_published_or_says_it_was_not() -> None:
    asked: list[tuple[int, float]] = []

    def wait_offset(offset: int, timeout: float) -> int:
        asked.append((offset, timeout))
        if offset > 100:
            raise TimeoutError
        return 100

    ops = broker_ops(lambda fn: Future(), dict, lambda ev: True, None, wait_offset)
    got = ops["wait_offset"]({"offset": 90, "timeout": 2})
    assert got["metadata_offset"] == 100 and got["at"] > 0 and asked == [(90, 2.0)]
    with pytest.raises(AdminError, match="not replayed within"):
        ops["wait_offset"]({"offset": 101})
    with pytest.raises(AdminError, match="wants offset"):
        ops["wait_offset"]({"offset": "x"})
    assert "wait_offset" not in broker_ops(lambda fn: Future(), dict, lambda ev: True)
