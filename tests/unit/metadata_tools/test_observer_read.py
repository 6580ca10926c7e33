"""The quorum read's decisions without sockets: records up to the high watermark (a batch past
it left out, control batches skipped), a snapshot fetched chunk by chunk and the read
restarted from it, a leader that moves, and the bounds; the ``--bootstrap-controller``
address forms."""

from __future__ import annotations

from typing import Any

import pytest

from adapters.metadata_tools.observer_read import (
    LeaderMoved,
    ObserverRead,
    ReadAgain,
    ReadError,
)
from adapters.metadata_tools.quorum_reader import Controller, parse_controllers
from fsm.errors import ErrorCode
from fsm.raft.messages import (
    Batch,
    FetchRequest,
    FetchResponse,
    FetchSnapshotRequest,
    FetchSnapshotResponse,
    LeaderChange,
    OffsetAndEpoch,
)

NONE = ErrorCode.NONE
SNAP = OffsetAndEpoch(4, 2)


def decode(data: bytes, snap: OffsetAndEpoch) -> tuple[list[Any], int]:
    if data != b"abcdef":
        raise ValueError("not the snapshot")
    return ["s1", "s2"], 77


def fetched(hw: int, *batches: Batch, epoch: int = 2, **kw: Any) -> FetchResponse:
    return FetchResponse(NONE, epoch, 1, hw, 0, tuple(batches), **kw)


def new_read(**kw: Any) -> ObserverRead:
    return ObserverRead(2, 1000, decode, lambda b: 1000 + b.base_offset, **kw)


def test_records_up_to_the_high_watermark() -> None:
    read = new_read()
    assert read.next_request() == FetchRequest(-1, 2, 0, -1)
    read.on_fetch(fetched(3, Batch(0, 2, (LeaderChange(1, (1, 2, 3), (1, 2)),), True),
                          Batch(1, 2, ("a", "b")), Batch(3, 2, ("c",))), size=10)
    assert read.records == ["a", "b"]  # the batch at 3 ends past the high watermark 3
    assert read.done and read.last_batch == (2, 2, 1001) and read.bytes_read == 10
    more = new_read()
    more.on_fetch(fetched(4, Batch(0, 1, ("a",))))
    assert not more.done and more.next_request() == FetchRequest(-1, 2, 1, 1)
    more.on_fetch(fetched(4, Batch(1, 2, ("b", "c", "d"))))
    assert more.done and more.records == ["a", "b", "c", "d"]
    # a quorum that keeps committing: the read ends at the first answer's high watermark
    busy = new_read()
    busy.on_fetch(fetched(2, Batch(0, 2, ("a", "b"))))
    assert busy.done
    busy = new_read()
    busy.on_fetch(fetched(2, Batch(0, 2, ("a",))))
    busy.on_fetch(fetched(9, Batch(1, 2, ("b", "c"))))
    assert busy.done and busy.records == ["a", "b", "c"] and busy.high_watermark == 9


def test_an_empty_log_is_read_at_once() -> None:
    read = new_read()
    read.on_fetch(fetched(0))
    assert read.done and read.records == []


def test_a_snapshot_is_fetched_in_chunks_then_the_log_after_it() -> None:
    read = new_read()
    read.on_fetch(fetched(6, snapshot_id=SNAP))
    assert read.next_request() == FetchSnapshotRequest(-1, 2, SNAP, 0)
    read.on_snapshot_chunk(FetchSnapshotResponse(NONE, 2, 1, SNAP, 6, 0, b"abc"))
    assert read.next_request() == FetchSnapshotRequest(-1, 2, SNAP, 3)
    read.on_snapshot_chunk(FetchSnapshotResponse(NONE, 2, 1, SNAP, 6, 3, b"def"))
    assert read.snapshot == SNAP and read.snapshot_records == ["s1", "s2"]
    assert read.last_batch == (3, 2, 77) and not read.done
    assert read.next_request() == FetchRequest(-1, 2, 4, 2)
    read.on_fetch(fetched(6, Batch(4, 2, ("e", "f"))))
    assert read.done and read.records == ["e", "f"]


def test_a_snapshot_that_does_not_decode_or_changed() -> None:
    read = new_read()
    read.on_fetch(fetched(6, snapshot_id=SNAP))
    with pytest.raises(ReadError, match="does not decode: not the snapshot"):
        read.on_snapshot_chunk(FetchSnapshotResponse(NONE, 2, 1, SNAP, 3, 0, b"xyz"))
    read = new_read()
    read.on_fetch(fetched(6, snapshot_id=SNAP))
    with pytest.raises(ReadAgain, match="SNAPSHOT_NOT_FOUND"):  # a newer one: read again
        read.on_snapshot_chunk(FetchSnapshotResponse(ErrorCode.SNAPSHOT_NOT_FOUND, 2, 1,
                                                     SNAP, 0, 0, None))
    read = new_read()
    read.on_fetch(fetched(6, snapshot_id=SNAP))
    with pytest.raises(ReadError, match="sent nothing at 0 of 6"):
        read.on_snapshot_chunk(FetchSnapshotResponse(NONE, 2, 1, SNAP, 6, 0, b""))


def test_a_leader_that_moves_is_followed() -> None:
    read = new_read()
    with pytest.raises(LeaderMoved) as moved:
        read.on_fetch(FetchResponse(ErrorCode.NOT_LEADER_OR_FOLLOWER, 3, 2, 5, 0))
    assert (moved.value.leader_id, moved.value.epoch) == (2, 3)
    with pytest.raises(LeaderMoved):
        read.on_fetch(fetched(5, Batch(0, 3, ("a",)), epoch=3))  # an answer of a newer epoch
    with pytest.raises(LeaderMoved):
        read.on_fetch(FetchResponse(ErrorCode.FENCED_LEADER_EPOCH, 3, 2, 5, 0))


def test_bounds_and_divergence() -> None:
    small = ObserverRead(2, 5, decode)
    with pytest.raises(ReadError, match="over 5 bytes read"):
        small.on_fetch(fetched(1, Batch(0, 2, ("a",))), size=6)
    read = new_read()
    read.on_fetch(fetched(1, Batch(0, 2, ("a",))))
    with pytest.raises(ReadError, match="diverges"):
        new_read().on_fetch(fetched(1, diverging_epoch=OffsetAndEpoch(0, 1)))
    stuck = new_read()
    with pytest.raises(ReadError, match="brought nothing"):
        for _ in range(100):
            stuck.on_fetch(fetched(5))
    with pytest.raises(ReadError, match="over --max-bytes"):
        big = ObserverRead(2, 5, decode)
        big.on_fetch(fetched(6, snapshot_id=SNAP))
        big.on_snapshot_chunk(FetchSnapshotResponse(NONE, 2, 1, SNAP, 6, 0, b"abc"))


def test_bootstrap_controller_forms() -> None:
    assert parse_controllers("1@h:9093, 127.0.0.1:9094") == [
        Controller(1, ("h", 9093)), Controller(None, ("127.0.0.1", 9094))]
    for bad in ("", "h", "x@h:1", "h:0"):
        with pytest.raises(ValueError):
            parse_controllers(bad)
