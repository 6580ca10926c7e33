"""In-memory stand-ins for the node's log and transport, for the shell's unit tests only (the
integration tests and benchmarks use ``adapters.raft_log`` and ``adapters.raft_transport``).
Both write what they did into one shared ``journal``, so a test can assert the order of
durable writes and sends."""

from __future__ import annotations

import threading
from typing import Any

from fsm.raft.log_summary import LogSummary, QuorumState
from fsm.raft.messages import Batch


class MemoryLog:
    def __init__(self, journal: list[tuple[Any, ...]], *, state: QuorumState | None = None,
                 batches: tuple[Batch, ...] = ()) -> None:
        self.journal = journal
        self.state = state or QuorumState()
        self.batches: list[Batch] = list(batches)
        self.flushed_end = self.end
        self.flush_gate: threading.Event | None = None  # set: flush() waits on it once
        self.flush_calls = 0
        self.fail_flush: Exception | None = None
        self.closed = False

    @property
    def end(self) -> int:
        return self.batches[-1].end_offset if self.batches else 0

    def summary(self) -> LogSummary:
        epochs: list[tuple[int, int]] = []
        for b in self.batches:
            if not epochs or epochs[-1][0] != b.epoch:
                epochs.append((b.epoch, b.base_offset))
        return LogSummary(end_offset=self.end, epochs=tuple(epochs))

    def read_quorum_state(self) -> QuorumState:
        return self.state

    def write_quorum_state(self, state: QuorumState, voters: Any) -> None:
        self.state = state
        self.voters = tuple(voters)
        self.journal.append(("quorum-state", state))

    def append(self, batches: tuple[Batch, ...]) -> None:
        if batches[0].base_offset != self.end:
            raise ValueError(f"append at {batches[0].base_offset}, log end {self.end}")
        self.batches.extend(batches)
        self.journal.append(("append", batches[0].base_offset, batches[-1].end_offset))

    def flush(self) -> None:
        self.flush_calls += 1
        gate, self.flush_gate = self.flush_gate, None
        if gate is not None:
            gate.wait(10)
        if self.fail_flush is not None:
            raise self.fail_flush
        self.flushed_end = self.end
        self.journal.append(("flush", self.end))

    def read(self, from_offset: int, to_offset: int, max_batches: int) -> tuple[Batch, ...]:
        out = [b for b in self.batches if from_offset <= b.base_offset < to_offset]
        return tuple(out[:max_batches])

    def truncate_to(self, offset: int) -> int:
        self.batches = [b for b in self.batches if b.end_offset <= offset]
        self.journal.append(("truncate", offset))
        return self.end

    def close(self) -> None:
        self.closed = True


class MemoryTransport:
    def __init__(self, journal: list[tuple[Any, ...]]) -> None:
        self.journal = journal
        self.sent: list[tuple[int, Any]] = []
        self.closed = False

    def send(self, destination: int, message: Any) -> None:
        self.sent.append((destination, message))
        self.journal.append(("send", destination, message))

    def close(self) -> None:
        self.closed = True
