"""The ledger of committed records and the lost-topics check can fail: a record changed, a
batch gone, a batch of another epoch, a snapshot past the high watermark; a topic
acknowledged and missing, recreated under another id, or short of partitions."""

from __future__ import annotations

from typing import Any

from adapters.chaos.plan import Action, ActionKind
from adapters.kraft_chaos.committed import Ledger, LedgerBatch, NodeLog
from adapters.kraft_chaos.workload import Expected, Operation, Workload, _finished


def batches() -> list[LedgerBatch]:
    return [LedgerBatch(0, 1, 1, True, ("c0",)),
            LedgerBatch(1, 3, 1, False, ("a1", "a2")),
            LedgerBatch(3, 4, 2, True, ("c3",)),
            LedgerBatch(4, 7, 2, False, ("b4", "b5", "b6"))]


def log(node: str, got: list[LedgerBatch], hw: int = 7, start: int = 0,
        snapshot: tuple[int, int] | None = None) -> NodeLog:
    return NodeLog(node, start, hw, snapshot, got)


def ledger() -> Ledger:
    led = Ledger()
    assert led.extend(log("controller 3000", batches())) == []
    assert (led.end, led.records) == (7, 7)
    return led


def test_equal_logs_agree_and_a_longer_one_extends() -> None:
    led = ledger()
    assert led.compare(log("controller 3001", batches())) == []
    assert led.compare(log("controller 3002", batches()[:2], hw=3)) == []  # behind: fine
    more = [*batches(), LedgerBatch(7, 8, 3, False, ("x7",))]
    assert led.extend(NodeLog("controller 3001", 0, 8, None, more[4:], 7)) == []
    assert led.end == 8


def test_a_changed_record_is_lost() -> None:
    led = ledger()
    forged = batches()
    forged[3] = LedgerBatch(4, 7, 2, False, ("b4", "FORGED", "b6"))
    (row,) = led.compare(log("controller 3001", forged))
    assert row["node"] == "controller 3001" and row["offset"] == 4
    assert "offsets [5]" in row["detail"]


def test_a_missing_batch_and_a_batch_of_another_epoch_are_lost() -> None:
    led = ledger()
    missing = [b for b in batches() if b.base != 1]
    rows = led.compare(log("controller 3002", missing))
    assert [(r["offset"], "missing" in r["detail"]) for r in rows] == [(1, True)]
    other = batches()
    other[1] = LedgerBatch(1, 3, 5, False, ("a1", "a2"))
    (row,) = led.compare(log("controller 3002", other))
    assert row["offset"] == 1 and "epoch 5" in row["detail"]


def test_a_truncated_log_behind_a_high_watermark_is_lost() -> None:
    led = ledger()
    rows = led.compare(log("controller 3001", batches()[:2], hw=7))  # claims 7, holds 3
    assert [r["offset"] for r in rows] == [3, 4]


def test_a_snapshot_past_the_committed_offset_or_of_another_epoch_is_lost() -> None:
    led = ledger()
    rows = led.compare(log("controller 3001", batches()[3:], hw=7, start=4, snapshot=(9, 2)))
    assert [r["offset"] for r in rows] == [9]
    assert led.compare(log("controller 3001", batches()[3:], hw=7, start=4,
                           snapshot=(4, 2))) == []
    (row,) = led.compare(log("controller 3001", batches()[3:], hw=7, start=4, snapshot=(4, 1)))
    assert row["offset"] == 4 and "epoch 1" in row["detail"]
    # a node just restarted knows no high watermark yet: the ledger's end stands for it
    assert led.compare(log("controller 3002", batches()[3:], hw=0, start=4,
                           snapshot=(4, 2))) == []


def test_the_ledger_is_bounded() -> None:
    led = Ledger(max_records=4)
    led.extend(log("controller 3000", batches()))
    assert led.full and led.records <= 4


def topics(**parts: tuple[str, int]) -> dict[str, Any]:
    return {name: {"topic_id": tid, "partitions": {str(i): {} for i in range(n)}}
            for name, (tid, n) in parts.items()}


def test_a_lost_topic_is_reported() -> None:
    w = Workload(lambda: [], 30.0)
    w.expected = {"a": Expected(2, "ID-A"), "b": Expected(1, "ID-B"), "c": Expected(3, None),
                  "d": Expected(1, "ID-D")}
    w.uncertain = {"d"}
    assert w.lost(topics(a=("ID-A", 2), b=("ID-B", 1), c=("x", 3))) == []
    got = w.lost(topics(a=("ID-A", 1), b=("OTHER", 1)))
    assert got == ["topic a has 1 partition(s), 2 were acknowledged",
                   "topic b has topic id OTHER, it was created as ID-B",
                   "topic c (acknowledged created, never deleted) is gone from the committed "
                   "image"]


def test_operations_finish_as_the_committed_image_shows() -> None:
    reassign = Operation(1, Action(ActionKind.REASSIGN, "a", ((2, 3),), 0), 0.0, 10.0)
    view = {"a": {"topic_id": "x", "partitions": {"0": {"replicas": [1, 2, 3],
                                                        "isr": [1, 2, 3]}}}}
    assert _finished(reassign, view) is None  # still moving: adding and removing
    view["a"]["partitions"]["0"] = {"replicas": [2, 3], "isr": [2]}
    assert _finished(reassign, view) is None  # the new replica not in sync yet
    view["a"]["partitions"]["0"] = {"replicas": [2, 3], "isr": [3, 2]}
    assert _finished(reassign, view) == "completed"
    add = Operation(2, Action(ActionKind.ADD_PARTITIONS, "a", ((1, 2),)), 0.0, 10.0, want=2)
    assert _finished(add, view) is None
    assert _finished(Operation(3, Action(ActionKind.DELETE, "a"), 0.0, 1.0), view) is None
    assert _finished(Operation(3, Action(ActionKind.DELETE, "a"), 0.0, 1.0), {}) == "deleted"


def test_offsets_the_ledger_never_saw_are_not_judged() -> None:
    led = Ledger()
    led.extend(log("controller 3000", batches()[:2], hw=3))  # [0, 3)
    later = [LedgerBatch(9, 10, 3, False, ("z9",))]
    assert led.extend(NodeLog("controller 3000", 9, 10, (9, 3), later, 3)) == []
    assert (led.end, led.skipped, led.gaps) == (10, 6, [(3, 9)])
    other = [*batches(), LedgerBatch(7, 9, 3, False, ("y7", "y8")), *later]  # in the gap
    assert led.compare(log("controller 3001", other, hw=10)) == []
    straddling = [*batches()[:2], LedgerBatch(3, 10, 3, False, tuple("abcdefg"))]
    got = led.compare(log("controller 3002", straddling, hw=10))
    assert [r["offset"] for r in got] == [3, 9]  # the odd batch, and the ledger's 9 not there


def test_an_active_log_wholly_in_its_snapshot_moves_the_ledger_past_it() -> None:
    """The active controller snapshotted at its high watermark and deleted the log below: no
    batch follows, yet the offsets are committed. A standby that installs that snapshot
    (restarted: high watermark 0) holds no record past the committed offset."""
    led = ledger()  # [0, 7)
    assert led.extend(NodeLog("controller 3000", 9, 9, (9, 3), [], 9)) == []
    assert (led.end, led.skipped, led.gaps) == (9, 2, [(7, 9)])
    assert led.compare(log("controller 3001", [], hw=0, start=9, snapshot=(9, 3))) == []
    # a snapshot past even that is still a loss
    (row,) = led.compare(log("controller 3001", [], hw=0, start=11, snapshot=(11, 3)))
    assert row["offset"] == 11 and "past the committed offset" in row["detail"]
