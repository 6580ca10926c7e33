"""The node shell around a scripted core: effects carried out in order on the log and the
transport, flushes deferred and coalesced, timers fired into the core, client appends
committed by the high watermark, a failed fsync halting the node."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from typing import Any

import pytest

from adapters.raft_node.shell import RaftNodeShell
from adapters.raft_node.timers import Deadlines
from fsm.errors import ErrorCode
from fsm.raft.config import RaftConfig
from fsm.raft.effects import (
    AppendBatches,
    AppendRefused,
    ArmTimer,
    Flush,
    HighWatermark,
    PersistQuorumState,
    RoleChanged,
    Send,
    SendRecords,
)
from fsm.raft.events import ClientAppend, Flushed, Received, Resign, Start, TimerFired
from fsm.raft.log_summary import LogSummary, QuorumState
from fsm.raft.messages import Batch, FetchRequest, FetchResponse, VoteRequest
from fsm.raft.roles import RaftRole
from tests.unit.raft_node.fakes import MemoryLog, MemoryTransport

CONFIG = RaftConfig(node_id=1, voters=(1, 2, 3))


class ScriptedCore:
    """Answers each event with ``script(event)``; remembers what it was handed."""

    def __init__(self, script: Callable[[Any], list[Any]]) -> None:
        self.script = script
        self.events: list[Any] = []
        self.seen = threading.Condition()

    def handle(self, event: Any) -> list[Any]:
        with self.seen:
            self.events.append(event)
            self.seen.notify_all()
        return self.script(event)

    def wait_for(self, pred: Callable[[list[Any]], bool], timeout: float = 5.0) -> None:
        with self.seen:
            assert self.seen.wait_for(lambda: pred(self.events), timeout), self.events


def leader_script(epoch: int = 1) -> Callable[[Any], list[Any]]:
    """Leads ``epoch`` from Start; appends each ClientAppend, flushes, and commits what was
    flushed at once (a one-voter quorum, in effect)."""

    def script(e: Any) -> list[Any]:
        if isinstance(e, Start):
            return [PersistQuorumState(QuorumState(epoch, 1, 1)),
                    RoleChanged(RaftRole.UNATTACHED, RaftRole.LEADER, epoch, 1)]
        if isinstance(e, ClientAppend):
            b = Batch(e.base_offset, e.epoch, e.records)
            return [AppendBatches((b,)), Flush(b.end_offset)]
        if isinstance(e, Flushed):
            return [HighWatermark(e.end_offset)]
        return []

    return script


def make_shell(script: Callable[[Any], list[Any]], **kw: Any
               ) -> tuple[RaftNodeShell, ScriptedCore, MemoryLog, MemoryTransport, list[Any]]:
    journal: list[Any] = []
    log, transport = MemoryLog(journal, **kw.pop("log_kw", {})), MemoryTransport(journal)
    core = ScriptedCore(script)

    def factory(config: RaftConfig, state: QuorumState, summary: LogSummary) -> ScriptedCore:
        core.start_args = (config, state, summary)  # type: ignore[attr-defined]
        return core

    shell = RaftNodeShell(CONFIG, log, transport, make_core=factory,
                          timers=Deadlines(random.Random(3)), **kw)
    return shell, core, log, transport, journal


def test_the_core_starts_from_the_logs_state_and_a_vote_is_durable_before_its_send() -> None:
    vote = VoteRequest(5, 1, 4, 10)

    def script(e: Any) -> list[Any]:
        if isinstance(e, Start):
            return [PersistQuorumState(QuorumState(5, -1, 1)), Send(2, vote), Send(3, vote)]
        return []

    old = (Batch(0, 4, ("a",) * 10),)
    shell, core, log, transport, journal = make_shell(
        script, log_kw={"state": QuorumState(4, 2, -1), "batches": old})
    shell.start()
    try:
        core.wait_for(lambda ev: len(ev) >= 1)
        shell.wait_for(lambda s: len(transport.sent) == 2, 5)
        _, state, summary = core.start_args  # type: ignore[attr-defined]
        assert state == QuorumState(4, 2, -1)
        assert summary.end_offset == 10 and summary.epochs == ((4, 0),)
        assert journal[0] == ("quorum-state", QuorumState(5, -1, 1))
        assert [j[0] for j in journal] == ["quorum-state", "send", "send"]
    finally:
        shell.stop()
    assert log.closed and transport.closed


def test_a_burst_of_appends_costs_one_fsync_and_each_ticket_commits() -> None:
    shell, core, log, _, journal = make_shell(leader_script())
    gate = threading.Event()
    shell.start()
    try:
        shell.wait_for(lambda s: s.is_leader, 5)
        log.flush_gate = gate  # the first fsync blocks until the burst is queued
        first = shell.append((b"r0",))
        core.wait_for(lambda ev: any(isinstance(e, ClientAppend) for e in ev))
        tickets = [shell.append((f"r{i}".encode(),)) for i in range(1, 51)]
        gate.set()
        for t in [first, *tickets]:
            assert t.wait(5) and t.error is None
        assert [t.base_offset for t in tickets] == list(range(1, 51))
        assert log.flush_calls == 2  # r0 alone, then r1..r50 together
        flushed = [e.end_offset for e in core.events if isinstance(e, Flushed)]
        assert flushed == [1, 51]  # one answer for the fifty flushes of the burst
        assert shell.status.high_watermark == 51 and shell.status.flushed_offset == 51
    finally:
        shell.stop()


def test_flush_every_bounds_how_long_a_flush_waits() -> None:
    shell, core, log, _, _ = make_shell(leader_script(), flush_every=1)
    gate = threading.Event()
    shell.start()
    try:
        shell.wait_for(lambda s: s.is_leader, 5)
        log.flush_gate = gate
        tickets = [shell.append((f"r{i}".encode(),)) for i in range(20)]
        gate.set()
        assert all(t.wait(5) and t.error is None for t in tickets)
        assert log.flush_calls == 20  # one per append: nothing coalesced
    finally:
        shell.stop()


def test_an_append_off_the_leader_fails_at_once_and_a_refusal_is_reported() -> None:
    def script(e: Any) -> list[Any]:
        if isinstance(e, ClientAppend):
            return [AppendRefused(e.epoch, 2, "not the leader")]
        return leader_script()(e) if isinstance(e, Start) else []

    shell, core, _, _, _ = make_shell(lambda e: [])
    shell.start()
    try:
        t = shell.append((b"x",))
        assert t.wait(5) and t.error is not None and "not the leader" in t.error
        assert not any(isinstance(e, ClientAppend) for e in core.events)
    finally:
        shell.stop()
    shell, core, _, _, _ = make_shell(script)
    shell.start()
    try:
        shell.wait_for(lambda s: s.is_leader, 5)
        t = shell.append((b"x",))
        assert t.wait(5) and t.error == "refused: not the leader"
    finally:
        shell.stop()


def test_losing_leadership_fails_the_appends_waiting_for_their_commit() -> None:
    def script(e: Any) -> list[Any]:
        if isinstance(e, ClientAppend):  # appended, never committed
            return [AppendBatches((Batch(e.base_offset, e.epoch, e.records),))]
        if isinstance(e, Received):
            return [RoleChanged(RaftRole.LEADER, RaftRole.FOLLOWER, 2, 3)]
        return leader_script()(e)

    shell, _, _, _, _ = make_shell(script)
    shell.start()
    try:
        shell.wait_for(lambda s: s.is_leader, 5)
        t = shell.append((b"x",))
        shell.wait_for(lambda s: s.log_end_offset == 1, 5)
        assert not t.done
        shell.deliver(3, object())
        assert t.wait(5) and "leadership of epoch 1 ended" in (t.error or "")
        assert shell.status.role is RaftRole.FOLLOWER and shell.status.leader_id == 3
    finally:
        shell.stop()


def test_send_records_fills_the_response_from_the_log() -> None:
    batches = (Batch(0, 1, (b"a", b"b")), Batch(2, 1, (b"c",)), Batch(3, 2, (b"d",)))
    empty = FetchResponse(ErrorCode.NONE, 2, 1, high_watermark=3, log_start_offset=0)

    def script(e: Any) -> list[Any]:
        if isinstance(e, Received):
            return [SendRecords(2, empty, e.message.fetch_offset, 4, 2)]
        return []

    shell, core, _, transport, _ = make_shell(script, log_kw={"batches": batches})
    shell.start()
    try:
        shell.deliver(2, FetchRequest(2, 2, 2, 1))
        shell.wait_for(lambda s: bool(transport.sent), 5)
        dest, resp = transport.sent[0]
        assert dest == 2 and resp.batches == batches[1:]  # from offset 2, at most 2 batches
        assert resp.high_watermark == 3
    finally:
        shell.stop()


def test_armed_timers_fire_into_the_core_and_rearming_postpones() -> None:
    fired: list[Any] = []

    def script(e: Any) -> list[Any]:
        if isinstance(e, Start):
            return [ArmTimer("fetch", 30), ArmTimer("request", 20, destination=2)]
        if isinstance(e, TimerFired):
            fired.append((e.kind, e.destination))
        return []

    shell, core, _, _, _ = make_shell(script)
    shell.start()
    try:
        core.wait_for(lambda ev: sum(isinstance(e, TimerFired) for e in ev) == 2)
        assert fired == [("request", 2), ("fetch", -1)]
        assert shell.timers.armed() == set()
    finally:
        shell.stop()


def test_a_failed_fsync_halts_the_node() -> None:
    halted: list[str] = []
    shell, core, log, _, _ = make_shell(leader_script(), on_halt=halted.append)
    log.fail_flush = OSError(5, "Input/output error")
    shell.start()
    try:
        shell.wait_for(lambda s: s.is_leader, 5)
        t = shell.append((b"x",))
        shell.wait_for(lambda s: s.failure is not None, 5)
        assert t.wait(5) and "halted" in (t.error or "")
        assert halted and "Input/output error" in halted[0]
        assert not any(isinstance(e, Flushed) for e in core.events)  # never claimed durable
        assert shell.append((b"y",)).error is not None
    finally:
        shell.stop()


@pytest.mark.parametrize("flush_every", [0, -3])
def test_bad_settings_are_refused(flush_every: int) -> None:
    with pytest.raises(ValueError, match="flush_every"):
        make_shell(lambda e: [], flush_every=flush_every)


def test_a_resigning_leader_runs_until_it_hears_of_its_successor() -> None:
    def script(e: Any) -> list[Any]:
        if isinstance(e, Resign):
            return [RoleChanged(RaftRole.LEADER, RaftRole.RESIGNED, 1, 1)]
        if isinstance(e, Received):
            return [RoleChanged(RaftRole.RESIGNED, RaftRole.FOLLOWER, 2, 3)]
        return leader_script()(e)

    shell, core, _, _, _ = make_shell(script)
    shell.start()
    shell.wait_for(lambda s: s.is_leader, 5)

    def successor() -> None:
        core.wait_for(lambda ev: any(isinstance(e, Resign) for e in ev))
        shell.deliver(3, "BeginQuorumEpoch")

    t = threading.Thread(target=successor)
    t.start()
    shell.stop(resign=True)
    t.join()
    kinds = [type(e).__name__ for e in core.events]
    assert kinds[-2:] == ["Resign", "Received"]  # the successor was heard before the stop
    assert shell.status.epoch == 2 and shell.status.leader_id == 3
