"""The Raft world's actions do what they say, checked with scripted nodes (``fake_node``):
a crash loses the unflushed tail and the timers but not the disk, a flush answers
``Flushed``, messages to the dead are dropped, loss and duplication spend their budgets,
timers fire once, a restart starts from what was durable, the shell fills records and
snapshot chunks, the state machine applies to the high watermark, and a copy is
independent."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from fsm.errors import ErrorCode
from fsm.raft import effects as fx
from fsm.raft.events import (
    ClientAppend,
    Flushed,
    Received,
    Resign,
    SnapshotWritten,
    Start,
    TimerFired,
)
from fsm.raft.log_summary import QuorumState
from fsm.raft.messages import (
    Batch,
    FetchResponse,
    FetchSnapshotResponse,
    OffsetAndEpoch,
    VoteRequest,
)
from fsm.raft.roles import RaftRole
from model_check.raft.scenario import RaftScenario
from model_check.raft.view import view_of
from model_check.raft.voter import WorldError
from model_check.raft.world import RAction, RaftWorld
from tests.unit.raft_world.fake_node import fake_nodes, on

VOTE = VoteRequest(1, 1, 0, 0)


@pytest.fixture(autouse=True)
def _fakes() -> Iterator[None]:
    with fake_nodes():
        yield


def world(**budgets: int) -> RaftWorld:
    return RaftWorld.fresh(RaftScenario("t", voters=3, max_in_flight=4, budgets=budgets))


def kinds(w: RaftWorld) -> list[str]:
    return [a.describe() for a in w.enabled_actions()]


def lead(w: RaftWorld, v: int, epoch: int = 1) -> None:
    """Voter v's node reports it leads ``epoch`` (as its RoleChanged effect would)."""
    on(v, Resign, fx.RoleChanged(RaftRole.CANDIDATE, RaftRole.LEADER, epoch, v))
    w._event(v, Resign())


def append_one(w: RaftWorld, v: int, flush: bool = True) -> None:
    """Voter v's node appends one record at its log end and asks for a flush."""
    x = w.voters[v]
    on(v, ClientAppend, fn=lambda e: [
        fx.AppendBatches((Batch(e.base_offset, e.epoch, e.records),)),
        *([fx.Flush(e.base_offset + 1)] if flush else [])])
    w.apply(RAction("append", v))
    assert x.end >= 1


def test_every_voter_starts() -> None:
    w = world()
    assert all(x.node.seen == [Start()] for x in w.voters.values())
    assert kinds(w) == []


def test_a_crash_loses_the_unflushed_tail_and_the_timers_but_not_the_disk() -> None:
    on(1, Start, fx.PersistQuorumState(QuorumState(1, -1, 1)), fx.ArmTimer(fx.ELECTION, 10))
    w = world(appends=2, crashes=1, timeouts=1)
    lead(w, 1)
    append_one(w, 1)
    assert RAction("flush", 1) in w.enabled_actions()
    w.apply(RAction("flush", 1))
    assert w.voters[1].node.seen[-1] == Flushed(1)
    append_one(w, 1)
    x = w.voters[1]
    assert (x.end, x.durable_end, x.flushes) == (2, 1, (2,))
    w.apply(RAction("crash", 1))
    assert not x.alive and x.end == 1 and x.durable_end == 1
    assert x.quorum == QuorumState(1, -1, 1)
    assert x.timers == frozenset() and x.flushes == () and x.role is None
    assert "flush voter 1" not in kinds(w)
    assert all("voter 1" not in k for k in kinds(w))


def test_a_restart_starts_a_new_node_from_what_was_durable() -> None:
    w = world(appends=2, crashes=1, restarts=1)
    lead(w, 2, epoch=3)
    append_one(w, 2)
    w.apply(RAction("flush", 2))
    append_one(w, 2, flush=False)
    w.apply(RAction("crash", 2))
    assert RAction("restart", 2) in w.enabled_actions()
    w.apply(RAction("restart", 2))
    node = w.voters[2].node
    assert node.seen == [Start()]
    assert node.summary.end_offset == 1
    assert node.summary.epochs == ((3, 0),)
    assert w.budgets["restarts"] == 0 and RAction("restart", 2) not in w.enabled_actions()


def test_messages_reorder_and_messages_to_the_dead_are_dropped() -> None:
    on(1, Start, fx.Send(2, VOTE), fx.Send(3, VOTE))
    w = world(crashes=1)
    assert sorted(a.describe() for a in w.enabled_actions() if a.kind == "deliver") == [
        "deliver 1->2 VoteRequest(candidate_epoch=1, candidate_id=1, last_offset_epoch=0, "
        "last_offset=0)",
        "deliver 1->3 VoteRequest(candidate_epoch=1, candidate_id=1, last_offset_epoch=0, "
        "last_offset=0)"]
    w.apply(RAction("deliver", 3, (1, 3, VOTE)))  # the second sent, delivered first
    assert w.voters[3].node.seen[-1] == Received(1, VOTE)
    w.apply(RAction("crash", 2))
    w.apply(RAction("deliver", 2, (1, 2, VOTE)))
    assert w.network == () and w.voters[2].node is None


def test_loss_and_duplication_spend_their_budgets() -> None:
    on(1, Start, fx.Send(2, VOTE))
    w = world(message_loss=1, duplicates=1)
    w.apply(RAction("duplicate", 2, (1, 2, VOTE)))
    assert len(w.network) == 2 and w.budgets["duplicates"] == 0
    assert [a.kind for a in w.enabled_actions()] == ["deliver", "lose"]  # one distinct message
    w.apply(RAction("lose", 2, (1, 2, VOTE)))
    assert len(w.network) == 1 and "lose" not in [a.kind for a in w.enabled_actions()]
    w.apply(RAction("deliver", 2, (1, 2, VOTE)))
    assert w.network == ()
    with pytest.raises(WorldError):
        w.apply(RAction("deliver", 2, (1, 2, VOTE)))


def test_a_full_network_drops_what_is_sent() -> None:
    on(1, Start, *[fx.Send(2, VoteRequest(e, 1, 0, 0)) for e in range(1, 7)])
    w = world()
    assert len(w.network) == 4 and w.dropped == 2


def test_timers_fire_once_in_any_order_within_their_budgets() -> None:
    on(1, Start, fx.ArmTimer(fx.ELECTION, 10), fx.ArmTimer(fx.REQUEST, 5, destination=2))
    on(2, Start, fx.ArmTimer(fx.FETCH, 10), fx.CancelTimer(fx.FETCH))
    w = world(timeouts=1, resends=1)
    assert kinds(w) == ["timer election fires on voter 1", "timer request to 2 fires on voter 1"]
    w.apply(RAction("timer", 1, (fx.REQUEST, 2)))
    assert w.voters[1].node.seen[-1] == TimerFired(fx.REQUEST, 2)
    assert kinds(w) == ["timer election fires on voter 1"]
    w.apply(RAction("timer", 1, (fx.ELECTION, -1)))
    assert kinds(w) == []


def test_each_flush_is_answered_once_in_order() -> None:
    w = world(appends=2)
    lead(w, 1)
    append_one(w, 1)
    append_one(w, 1)
    x = w.voters[1]
    assert x.flushes == (1, 2) and [a.kind for a in w.enabled_actions()] == ["flush"]
    w.apply(RAction("flush", 1))
    assert x.node.seen[-1] == Flushed(1) and x.durable_end == 1 and x.flushes == (2,)
    w.apply(RAction("flush", 1))
    assert x.node.seen[-1] == Flushed(2) and x.durable_end == 2 and x.flushes == ()
    assert not w.pending()


def test_the_shell_fills_fetch_answers_from_the_log() -> None:
    w = world(appends=3)
    lead(w, 1)
    for _ in range(3):
        append_one(w, 1)
    empty = FetchResponse(ErrorCode.NONE, 1, 1, 0, 0)
    on(1, Received, fx.SendRecords(2, empty, 1, 3, 1))
    on(2, Start)
    w._event(1, Received(2, VOTE))
    (_, (src, dst, msg)), = w.network
    assert (src, dst) == (1, 2)
    assert msg.batches == (Batch(1, 1, ("r2",)),)  # from 1, at most one batch
    on(1, Received, fx.SendRecords(2, empty, 2, 2, 5))
    w._event(1, Received(2, VOTE))
    assert any(m.batches == () for _, (_, _, m) in w.network)


def test_an_append_at_the_wrong_offset_is_a_world_error() -> None:
    w = world()
    on(1, Received, fx.AppendBatches((Batch(3, 1, ("x",)),)))
    with pytest.raises(WorldError, match="log ends at 0"):
        w._event(1, Received(2, VOTE))


def test_truncation_is_durable_at_once_and_cuts_short_a_flush_past_it() -> None:
    w = world(appends=2)
    lead(w, 1)
    append_one(w, 1)
    w.apply(RAction("flush", 1))
    append_one(w, 1)
    on(1, Received, fx.TruncateTo(1))
    w._event(1, Received(2, VOTE))
    x = w.voters[1]
    assert (x.end, x.durable_end, x.flushes) == (1, 1, (1,))  # answered, stale
    on(1, Received, fx.TruncateTo(0))
    w._event(1, Received(2, VOTE))
    assert (x.end, x.durable_end) == (0, 0)


def test_the_state_machine_applies_to_the_high_watermark_and_commits_are_remembered() -> None:
    w = world(appends=2)
    lead(w, 1, epoch=2)
    append_one(w, 1)
    append_one(w, 1)
    on(1, Received, fx.HighWatermark(1))
    w._event(1, Received(2, VOTE))
    x = w.voters[1]
    assert x.applied == ((2, "r1"),) and x.cursor == 1 and x.hw == 1
    assert w.committed == {(0, 2, "r1"): 2}
    on(1, Received, fx.HighWatermark(5))
    with pytest.raises(WorldError, match="beyond its log end"):
        w._event(1, Received(2, VOTE))


def test_a_leader_election_is_remembered() -> None:
    w = world()
    lead(w, 3, epoch=4)
    assert w.elected == {(4, 3)} and w.leaders() == [3]
    assert view_of(w).voter(3).role == "leader"


def test_a_snapshot_is_written_sent_in_chunks_and_installed() -> None:
    w = world(appends=2, snapshots=1)
    lead(w, 1)
    append_one(w, 1)
    append_one(w, 1)
    assert "snapshot voter 1" not in kinds(w)  # nothing applied yet
    on(1, Received, fx.HighWatermark(2))
    w._event(1, Received(2, VOTE))
    w.apply(RAction("snapshot", 1))
    sid = OffsetAndEpoch(2, 1)
    assert w.voters[1].node.seen[-1] == SnapshotWritten(sid)
    assert w.voters[1].snapshot.entries == ((1, "r1"), (1, "r2"))
    on(1, Received, fx.DeleteBefore(2))
    w._event(1, Received(2, VOTE))
    assert w.voters[1].log == () and w.voters[1].log_start == 2
    assert w.voters[1].entries(durable_only=True) == {0: (1, "r1"), 1: (1, "r2")}
    on(1, Received, fx.SendSnapshotChunk(3, FetchSnapshotResponse(ErrorCode.NONE, 1, 1, sid)))
    w._event(1, Received(3, VOTE))
    (_, m), = w.network
    assert m[2].size == 2 and m[2].chunk == ((1, "r1"), (1, "r2"))
    on(3, Received, fx.InstallSnapshot(sid))
    w.apply(RAction("deliver", 3, m))
    y = w.voters[3]
    assert y.snapshot.id == sid and y.log_start == y.end == y.durable_end == 2
    assert y.applied == ((1, "r1"), (1, "r2")) and y.cursor == 2


def test_installing_a_snapshot_not_fetched_is_a_world_error() -> None:
    w = world()
    on(2, Received, fx.InstallSnapshot(OffsetAndEpoch(3, 1)))
    with pytest.raises(WorldError, match="installs snapshot"):
        w._event(2, Received(1, VOTE))


def test_a_state_machine_that_applies_an_offset_again_differently_is_recorded() -> None:
    w = world(appends=1)
    lead(w, 1)
    append_one(w, 1)
    on(1, Received, fx.HighWatermark(1))
    w._event(1, Received(2, VOTE))
    w.voters[1].cursor = 0
    w.voters[1].log = (Batch(0, 1, ("other",)),)
    w._event(1, Received(2, VOTE))
    assert w.conflicts == ((1, 0, (1, "r1"), (1, "other")),)


def test_a_copy_is_independent_and_keys_are_canonical() -> None:
    on(1, Start, fx.Send(2, VOTE), fx.Send(3, VOTE), fx.ArmTimer(fx.ELECTION, 1))
    w = world(crashes=1)
    key = w.key()
    copy = w.snapshot()
    assert copy.key() == key
    copy.apply(RAction("crash", 1))
    assert copy.key() != key and w.key() == key and w.voters[1].alive
    a = world(crashes=1)
    b = world(crashes=1)
    a.apply(RAction("deliver", 2, (1, 2, VOTE)))
    a.apply(RAction("deliver", 3, (1, 3, VOTE)))
    b.apply(RAction("deliver", 3, (1, 3, VOTE)))
    b.apply(RAction("deliver", 2, (1, 2, VOTE)))
    assert a.key() != w.key()
    assert a.key() == b.key()  # the same messages delivered in another order


def test_a_delivered_message_tells_the_epoch_it_carries_until_a_crash() -> None:
    on(1, Start, fx.Send(2, VoteRequest(4, 1, 0, 0)))
    w = world(crashes=1)
    assert w.voters[2].heard == 0
    w.apply(RAction("deliver", 2, (1, 2, VoteRequest(4, 1, 0, 0))))
    assert w.voters[2].heard == 4 and view_of(w).voter(2).heard == 4
    w.apply(RAction("crash", 2))
    assert w.voters[2].heard == 0


def test_a_pickled_world_leaves_its_memos_behind() -> None:
    import pickle

    w = world()
    key = w.key()
    view_of(w)
    assert all(x.memo_key is not None and x.memo_facts is not None for x in w.voters.values())
    again = pickle.loads(pickle.dumps(w))
    assert all(x.memo_key is None and x.memo_facts is None for x in again.voters.values())
    assert again.key() == key
