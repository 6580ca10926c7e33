"""The leader's side: answering Fetch (epochs, divergence, snapshot redirect, records,
parking), the high-watermark rule, and the state machine's appends."""

from __future__ import annotations

from fsm.errors import ErrorCode
from fsm.raft.effects import (
    PARKED,
    AppendBatches,
    AppendRefused,
    ArmTimer,
    Flush,
    HighWatermark,
    SendRecords,
)
from fsm.raft.events import ClientAppend, Flushed, Received, TimerFired
from fsm.raft.leader_state import majority_offset, next_high_watermark
from fsm.raft.log_summary import QuorumState
from fsm.raft.messages import FetchRequest, FetchResponse, OffsetAndEpoch
from fsm.raft.roles import RaftRole
from tests.unit.raft.helpers import fetch, leader, log_of, make, of, sent


def records_answer(effects: list) -> SendRecords:
    (answer,) = of(effects, SendRecords)
    return answer


def test_fetches_of_another_epoch_are_fenced_or_unknown():
    node = leader(1, epoch=4)  # leads 5
    low = node.handle(Received(2, FetchRequest(2, 4, 0, 0)))
    assert sent(low)[0].error is ErrorCode.FENCED_LEADER_EPOCH and sent(low)[0].leader_id == 1
    high = node.handle(Received(2, FetchRequest(2, 6, 0, 0)))
    assert sent(high)[0].error is ErrorCode.UNKNOWN_LEADER_EPOCH
    assert node.role is RaftRole.UNATTACHED and node.epoch == 6  # a higher epoch: stepped down


def test_a_fetch_at_a_non_leader_names_the_leader_it_knows():
    node, _ = make(2, state=QuorumState(3, 1, -1))
    effects = node.handle(Received(9, FetchRequest(9, 3, 0, 0)))
    assert sent(effects) == [FetchResponse(ErrorCode.NOT_LEADER_OR_FOLLOWER, 3, 1, 0, 0,
                                           fetch_offset=0, last_fetched_epoch=0)]


def test_the_leader_sends_its_records_from_the_fetch_offset_bounded_per_answer():
    node = leader(1, log=log_of((1, 5)), epoch=1, max_batches_per_fetch=7)  # LeaderChange at 5
    answer = records_answer(fetch(node, 2, 2, 1))
    assert (answer.destination, answer.from_offset, answer.to_offset, answer.max_batches) == (
        2, 2, 6, 7)
    assert answer.response.leader_epoch == 2 and answer.response.fetch_offset == 2


def test_a_diverging_fetch_gets_the_leaders_end_of_the_largest_epoch_not_past_its_own():
    # leader: epoch 1 at [0, 3), epoch 3 at [3, 5), LeaderChange of epoch 4 at 5
    node = leader(1, log=log_of((1, 3), (3, 2)), epoch=3)
    # follower wrote epoch 2 entries at [3, 6) that no leader kept
    effects = fetch(node, 2, 6, 2)
    assert sent(effects)[0].diverging_epoch == OffsetAndEpoch(3, 1)
    # follower has more of epoch 3 than the leader (impossible past a leader's end)
    assert sent(fetch(node, 3, 7, 3))[0].diverging_epoch == OffsetAndEpoch(5, 3)
    assert node.positions == {2: -1, 3: -1}  # a diverging fetch is no position


def test_a_fetch_below_the_log_start_is_sent_to_the_snapshot():
    snap = OffsetAndEpoch(4, 1)
    node = leader(1, log=log_of((1, 2), start=4, snapshot=snap), epoch=1)
    assert sent(fetch(node, 2, 2, 1))[0].snapshot_id == snap
    assert sent(fetch(node, 2, 4, 0))[0].snapshot_id == snap  # diverges below the start
    assert records_answer(fetch(node, 2, 4, 1)).from_offset == 4


def test_the_high_watermark_needs_a_majority_of_durable_ends_in_this_epoch():
    node = leader(1, voters=(1, 2, 3, 4, 5), flush=False)
    node.handle(ClientAppend(1, 1, ("a",)))
    node.handle(ClientAppend(1, 2, ("b",)))  # log end 3, nothing flushed by the leader yet
    assert not of(fetch(node, 2, 3, 1), HighWatermark)
    assert not of(fetch(node, 3, 3, 1), HighWatermark)
    assert node.high_watermark == 0  # two followers at 3, the leader's own records unflushed
    assert of(node.handle(Flushed(1)), HighWatermark) == [HighWatermark(1)]  # LeaderChange
    assert of(node.handle(Flushed(2)), HighWatermark) == [HighWatermark(2)]
    assert of(node.handle(Flushed(3)), HighWatermark) == [HighWatermark(3)]
    assert node.positions == {2: 3, 3: 3, 4: -1, 5: -1}


def test_figure_8_an_earlier_epochs_entries_are_not_committed_by_counting_replicas():
    # leader of epoch 4: entries of epoch 2 at [0, 2) (never committed), its LeaderChange at 2
    node = leader(1, log=log_of((2, 2)), epoch=3)
    assert node.epoch_start == 2
    effects = fetch(node, 2, 2, 2)  # a majority holds [0, 2): a naive leader would commit it
    assert node.high_watermark == 0 and not of(effects, HighWatermark)
    assert majority_offset(3, (2, -1), 2) == 2  # what a naive rule would take
    assert of(fetch(node, 2, 3, 4), HighWatermark) == [HighWatermark(3)]  # the LeaderChange


def test_next_high_watermark_never_moves_back():
    assert next_high_watermark(9, 5, (5, 5), 2, 0) == 9
    assert next_high_watermark(2, 5, (4, -1), 2, 0) == 4
    assert next_high_watermark(2, 5, (4, -1), 2, 4) == 2


def test_a_late_duplicate_fetch_does_not_lower_a_voters_position():
    node = leader(1)
    node.handle(ClientAppend(1, 1, ("a",)))
    fetch(node, 2, 2, 1)
    fetch(node, 2, 1, 1)
    assert node.positions[2] == 2


def test_a_caught_up_fetch_is_parked_and_answered_when_the_log_grows():
    node = leader(1, fetch_timeout_ms=800)
    first = fetch(node, 2, 1, 1)  # at the end, but the HW is news to it: answered
    assert sent(first) and node.high_watermark == 1
    parked = fetch(node, 2, 1, 1)
    assert not sent(parked) and not of(parked, SendRecords)
    assert ArmTimer(PARKED, 400, 0, 2) in parked
    effects = node.handle(ClientAppend(1, 1, ("a",)))
    assert records_answer(effects).from_offset == 1
    assert not node.parked


def test_a_parked_fetch_is_answered_when_its_timer_fires_or_the_hw_moves():
    node = leader(1)
    fetch(node, 2, 1, 1)
    fetch(node, 2, 1, 1)
    assert node.handle(TimerFired(PARKED, 2)) and not node.parked
    # parked 3 hears of the HW that 2's fetch moved
    fetch(node, 3, 1, 1)
    fetch(node, 3, 1, 1)
    node.handle(ClientAppend(1, 1, ("a",)))  # 3 answered with the record
    fetch(node, 3, 2, 1)  # the leader has not flushed "a": the HW stays 1, known to 3
    assert 3 in node.parked and node.high_watermark == 1
    effects = node.handle(Flushed(2))  # leader and 3 hold 2: the HW moves, 3 hears it
    assert of(effects, HighWatermark) == [HighWatermark(2)]
    assert [m.high_watermark for m in sent(effects, to=3)] == [2] and not node.parked


def test_appends_are_refused_unless_leader_of_the_epoch_at_the_log_end():
    node = leader(1)
    assert of(node.handle(ClientAppend(1, 1, ("a",))), Flush) == [Flush(2)]
    (refused,) = node.handle(ClientAppend(1, 1, ("b",)))
    assert refused == AppendRefused(1, 1, "base offset 1 is not the log end 2")
    assert node.handle(ClientAppend(0, 2, ("b",)))[0].reason.startswith("epoch 0")
    follower, _ = make(2, state=QuorumState(1, 1, -1))
    assert isinstance(follower.handle(ClientAppend(1, 0, ("x",)))[0], AppendRefused)
    effects = node.handle(ClientAppend(1, 2, ("b", "c")))
    assert of(effects, AppendBatches)[0].batches[0].end_offset == 4 and node.end_offset == 4


def test_a_fetcher_without_a_replica_id_is_answered_at_once_and_not_kept():
    """A tool (replica id -1, a connection's negative id as its source: KAFKA-12161) reads
    the log like an observer, but the leader keeps no position for it and never parks it."""
    node = leader(1, log=log_of((1, 5)), epoch=1)  # LeaderChange of epoch 2 at 5
    tool = -1001
    answer = records_answer(node.handle(Received(tool, FetchRequest(-1, 2, 0, -1))))
    assert (answer.destination, answer.from_offset, answer.to_offset) == (tool, 0, 6)
    assert answer.response.error is ErrorCode.NONE
    caught_up = node.handle(Received(tool, FetchRequest(-1, 2, 6, 2)))
    assert sent(caught_up) == [FetchResponse(ErrorCode.NONE, 2, 1, node.high_watermark, 0,
                                             fetch_offset=6, last_fetched_epoch=2)]
    assert not of(caught_up, ArmTimer)  # not parked
    assert tool not in node.observers and tool not in node.positions
    assert tool not in node.hw_sent and tool not in node.parked
    # an id that is not the sender's is still refused, either way round
    assert sent(node.handle(Received(9, FetchRequest(-1, 2, 0, -1))))[0].error is (
        ErrorCode.INVALID_REQUEST)
    assert sent(node.handle(Received(tool, FetchRequest(7, 2, 0, -1))))[0].error is (
        ErrorCode.INVALID_REQUEST)
