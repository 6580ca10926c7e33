"""The port keeps records encoded: metadata values are encoded once when appended, bytes go
through as they are, the controller's reads decode them, and a Fetch answer carries the
log's bytes when the log can give them."""

from __future__ import annotations

import gc
import random
from typing import Any

from adapters.raft_node.encoded import EncodedBatches
from adapters.raft_node.record_bytes import to_bytes, to_values
from adapters.raft_node.shell import RaftNodeShell
from adapters.raft_node.timers import Deadlines
from fsm.errors import ErrorCode
from fsm.kraft.image import image_from_records
from fsm.kraft.records.codec import encode_record
from fsm.kraft.records.values import ConfigRecord
from fsm.raft.config import RaftConfig
from fsm.raft.effects import AppendBatches, SendRecords
from fsm.raft.messages import Batch, FetchResponse, LeaderChange, OffsetAndEpoch
from tests.unit.raft_node.fakes import MemoryLog, MemoryTransport

REC = ConfigRecord(2, "t", "k", "v")


def port_over(log: Any) -> tuple[Any, MemoryTransport]:
    transport = MemoryTransport([])
    shell = RaftNodeShell(RaftConfig(1, (1, 2, 3)), log, transport, make_core=lambda *a: None,
                          timers=Deadlines(random.Random(1)))
    return shell.port, transport


def test_values_are_encoded_once_bytes_pass_and_control_batches_stay() -> None:
    b = Batch(0, 1, (REC, encode_record(REC)))
    assert to_bytes(b).records == (encode_record(REC), encode_record(REC))
    raw = Batch(0, 1, (b"x",))
    assert to_bytes(raw) is raw
    control = Batch(2, 1, (LeaderChange(1, (1, 2, 3)),), control=True)
    assert to_bytes(control) is control and to_values(control) is control
    assert to_values(to_bytes(b)).records == (REC, REC)


def test_the_log_gets_bytes_and_the_controller_reads_values() -> None:
    log = MemoryLog([])
    port, _ = port_over(log)
    port.append_batches(AppendBatches((Batch(0, 1, (REC,)), Batch(1, 1, (REC, REC)))))
    assert [r for b in log.batches for r in b.records] == [encode_record(REC)] * 3
    assert [r for b in port.read_committed(0, 3) for r in b.records] == [REC] * 3


class BytesLog(MemoryLog):
    def read_bytes(self, from_offset: int, to_offset: int, max_batches: int) -> bytes:
        self.journal.append(("read_bytes", from_offset, to_offset, max_batches))
        return b"on-disk-bytes"


def test_a_fetch_answer_carries_the_logs_bytes_when_it_can() -> None:
    empty = FetchResponse(ErrorCode.NONE, 1, 1, high_watermark=1, log_start_offset=0)
    log = BytesLog([], batches=(Batch(0, 1, (b"a",)),))
    port, transport = port_over(log)
    port.send_records(SendRecords(2, empty, 0, 1, 8))
    assert transport.sent == [(2, FetchResponse(ErrorCode.NONE, 1, 1, 1, 0,
                                                (EncodedBatches(b"on-disk-bytes"),)))]
    port.send_records(SendRecords(3, empty, 1, 1, 8))  # nothing to send: no read
    assert transport.sent[-1] == (3, empty)
    assert [j for j in log.journal if j[0] == "read_bytes"] == [("read_bytes", 0, 1, 8)]


class SnapshotImageLog(MemoryLog):
    """A log whose fast snapshot load gives ``image`` (None: it leaves the snapshot to
    ``read_snapshot``), noting whether the collector was on while it ran."""

    def __init__(self, image: Any) -> None:
        super().__init__([])
        self.image = image
        self.collector_on: list[bool] = []

    def read_snapshot_image(self, snapshot_id: OffsetAndEpoch) -> Any:
        self.collector_on.append(gc.isenabled())
        return None if self.image is None else (self.image, 7)


def test_the_snapshot_image_is_built_with_the_collector_paused() -> None:
    image = image_from_records([REC])
    log = SnapshotImageLog(image)
    port, _ = port_over(log)
    assert gc.isenabled()
    assert port.read_snapshot_image(OffsetAndEpoch(5, 1)) is image
    assert log.collector_on == [False] and gc.isenabled()  # paused through it, then back on
    assert port.snapshot_read_s > 0
    none = SnapshotImageLog(None)
    port, _ = port_over(none)
    assert port.read_snapshot_image(OffsetAndEpoch(5, 1)) is None
    assert port_over(MemoryLog([]))[0].read_snapshot_image(OffsetAndEpoch(5, 1)) is None
