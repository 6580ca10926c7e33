"""A follower writes a fetched batch as the bytes the leader sent: the leader's log bytes go
out (``read_bytes``), the follower's decoder keeps each batch's bytes (``Batch.raw``) and its
log writes them without encoding a record again -- its segment equals the leader's byte for
byte. ``raw`` takes no part in a Batch's equality or hash; a raw batch that does not
continue the log is refused like any other; raw bytes that disagree with the batch are not
used."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path
from typing import Any

import pytest

from adapters.raft_log import BYTES, PARTITION_DIR, MetadataLog
from adapters.raft_log import batches as log_batches
from adapters.raft_node.encoded import EncodedBatches
from adapters.raft_node.shell import RaftNodeShell
from adapters.raft_node.timers import Deadlines
from adapters.raft_node.wire_records import decode_batches, encode_batches
from fsm.raft.config import RaftConfig
from fsm.raft.effects import AppendBatches
from fsm.raft.messages import Batch, LeaderChange
from tests.unit.raft_node.fakes import MemoryTransport

BATCHES = (Batch(0, 1, (LeaderChange(1, (1, 2, 3)),), control=True),
           Batch(1, 1, tuple(b"record %d" % i for i in range(1000))),
           Batch(1001, 2, (b"alpha", b"beta")))


def open_log(root: Path, clock_ms: int) -> MetadataLog:
    return MetadataLog.open(root, serde=BYTES, clock_ms=lambda: clock_ms)


def segment_bytes(root: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted((root / PARTITION_DIR).glob("*.log")))


def follower_port(log: MetadataLog) -> Any:
    shell = RaftNodeShell(RaftConfig(2, (1, 2, 3)), log, MemoryTransport([]),
                          make_core=lambda *a: None, timers=Deadlines(random.Random(1)))
    return shell.port


def fetched(leader: MetadataLog) -> tuple[Batch, ...]:
    """The leader's log as a Fetch answer carries it, decoded by the follower's codec."""
    data = leader.read_bytes(0, leader.end_offset, 64)
    return decode_batches(encode_batches((EncodedBatches(data),)))


def test_a_followers_log_holds_the_leaders_bytes_and_encodes_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    leader = open_log(tmp_path / "leader", 1_700_000_000_000)
    leader.append(BATCHES)
    leader.flush()
    got = fetched(leader)
    assert got == BATCHES and all(b.raw is not None for b in got)

    def no_encoding(*a: object, **kw: object) -> bytes:
        raise AssertionError("a fetched batch was encoded again")

    monkeypatch.setattr(log_batches, "encode", no_encoding)
    follower = open_log(tmp_path / "follower", 1_800_000_000_000)  # another clock
    follower_port(follower).append_batches(AppendBatches(got))
    follower.flush()
    assert follower.end_offset == leader.end_offset == 1003
    assert segment_bytes(tmp_path / "follower") == segment_bytes(tmp_path / "leader")
    assert follower.read(0, 1003, 64) == BATCHES
    leader.close()
    follower.close()
    reopened = open_log(tmp_path / "follower", 0)  # recovery reads the leader's bytes back
    assert reopened.end_offset == 1003 and reopened.read(0, 1003, 64) == BATCHES
    reopened.close()


def test_raw_takes_no_part_in_equality_hash_or_repr() -> None:
    got = decode_batches(encode_batches(BATCHES))
    assert got == BATCHES and hash(got) == hash(BATCHES)
    assert repr(got) == repr(BATCHES) and "raw" not in repr(got[1])
    assert dataclasses.replace(got[2], raw=None) == got[2]


def test_a_raw_batch_that_does_not_continue_the_log_is_refused(tmp_path: Path) -> None:
    leader = open_log(tmp_path / "leader", 5)
    leader.append(BATCHES)
    got = fetched(leader)
    follower = open_log(tmp_path / "follower", 5)
    with pytest.raises(ValueError, match="the log end is 0"):
        follower.append(got[1:])  # starts at 1 on an empty log
    follower.append(got[:1])
    with pytest.raises(ValueError, match="the log end is 1"):
        follower.append(got[2:])
    assert follower.end_offset == 1
    assert segment_bytes(tmp_path / "follower") == got[0].raw


def test_raw_bytes_that_disagree_with_the_batch_are_not_written(tmp_path: Path) -> None:
    """A batch whose ``raw`` names another offset (or epoch, or count) is encoded from its
    records: the log never writes bytes whose header says something else."""
    other = fetched_at(tmp_path / "other", 7)
    follower = open_log(tmp_path / "follower", 5)
    b = Batch(0, 1, (b"x",), raw=other.raw)  # raw's header: offset 7
    assert not log_batches.raw_fits(b)
    follower.append((b,))
    follower.flush()
    data = segment_bytes(tmp_path / "follower")
    assert data != other.raw and data == log_batches.encode(b, BYTES, 5)
    assert follower.read(0, 1, 8) == (Batch(0, 1, (b"x",)),)


def fetched_at(root: Path, offset: int) -> Batch:
    log = open_log(root, 5)
    log.append((Batch(0, 1, tuple(b"p%d" % i for i in range(offset))),
                Batch(offset, 1, (b"x",))))
    got = decode_batches(log.read_bytes(offset, offset + 1, 8))
    log.close()
    assert got[0].raw is not None
    return got[0]
