"""A follower fetching: append, flush, then fetch from the durable end; truncate only on a
diverging epoch; ignore what is late, duplicated or not contiguous; stand when the leader is
silent. Observers find the leader through the voters."""

from __future__ import annotations

from fsm.errors import ErrorCode
from fsm.raft.effects import (
    FETCH,
    REQUEST,
    AppendBatches,
    ArmTimer,
    Flush,
    HighWatermark,
    PersistQuorumState,
    TruncateTo,
)
from fsm.raft.events import ClientAppend, Flushed, Received, TimerFired
from fsm.raft.log_summary import QuorumState
from fsm.raft.messages import (
    BeginQuorumEpochRequest,
    BeginQuorumEpochResponse,
    FetchRequest,
    FetchResponse,
    OffsetAndEpoch,
    VoteRequest,
)
from fsm.raft.roles import RaftRole
from tests.unit.raft.helpers import answer, batch, fetch, follower, leader, log_of, make, of, sent


def test_records_are_appended_and_flushed_and_the_next_fetch_waits_for_the_flush():
    node, effects = follower(2, 1, 1)
    (req,) = sent(effects, FetchRequest)
    effects = answer(node, req, hw=1, batches=(batch(0, 1), batch(1, 1, 2)))
    assert of(effects, AppendBatches) == [AppendBatches((batch(0, 1), batch(1, 1, 2)))]
    assert of(effects, Flush) == [Flush(3)]
    assert not sent(effects, FetchRequest)  # not durable yet: nothing acknowledged
    assert of(effects, HighWatermark) == [HighWatermark(1)]  # min(leader's 1, own end 3)
    effects = node.handle(Flushed(3))
    assert sent(effects, FetchRequest) == [FetchRequest(2, 1, 3, 1)]


def test_the_high_watermark_never_passes_the_followers_own_end():
    node, effects = follower(2, 1, 1)
    (req,) = sent(effects, FetchRequest)
    effects = answer(node, req, hw=9, batches=(batch(0, 1),))
    assert of(effects, HighWatermark) == [HighWatermark(1)]


def test_records_that_do_not_continue_the_log_are_ignored_and_fetched_again():
    node, effects = follower(2, 1, 1, log=log_of((1, 2)))
    (req,) = sent(effects, FetchRequest)
    effects = answer(node, req, batches=(batch(5, 1),))
    assert not of(effects, AppendBatches) and node.end_offset == 2
    assert sent(effects, FetchRequest) == [FetchRequest(2, 1, 2, 1)]


def test_a_diverging_epoch_truncates_to_the_earlier_of_both_ends_and_fetches_again():
    # ours: epoch 1 at [0, 3), epoch 2 at [3, 6); leader: epoch 1 ends at 4 for it
    node, effects = follower(2, 1, 3, log=log_of((1, 3), (2, 3)))
    (req,) = sent(effects, FetchRequest)
    assert req == FetchRequest(2, 3, 6, 2)
    effects = answer(node, req, diverging_epoch=OffsetAndEpoch(4, 1))
    assert of(effects, TruncateTo) == [TruncateTo(3)]  # our epoch 1 ends at 3
    assert node.end_offset == 3 and node.epochs == ((1, 0),)
    assert sent(effects, FetchRequest) == [FetchRequest(2, 3, 3, 1)]


def test_a_late_answer_to_an_earlier_fetch_is_ignored():
    node, effects = follower(2, 1, 3, log=log_of((1, 3), (2, 3)))
    (old,) = sent(effects, FetchRequest)
    effects = answer(node, old, diverging_epoch=OffsetAndEpoch(3, 1))
    (new,) = sent(effects, FetchRequest)
    answer(node, new, batches=(batch(3, 3),))
    node.handle(Flushed(4))
    assert node.end_offset == 4
    effects = answer(node, old, diverging_epoch=OffsetAndEpoch(3, 1))  # duplicated: harmless
    assert effects == [] and node.end_offset == 4


def test_becoming_follower_never_truncates():
    node, effects = make(2, state=QuorumState(1), log=log_of((1, 5)))
    effects = node.handle(Received(1, BeginQuorumEpochRequest(2, 1)))
    assert node.role is RaftRole.FOLLOWER and not of(effects, TruncateTo)
    assert node.end_offset == 5 and node.high_watermark == 0
    persist = next(i for i, e in enumerate(effects) if isinstance(e, PersistQuorumState))
    reply = next(i for i, e in enumerate(effects)
                 if isinstance(getattr(e, "message", None), BeginQuorumEpochResponse))
    assert persist < reply and effects[persist] == PersistQuorumState(QuorumState(2, 1, -1))


def test_a_node_becoming_follower_with_a_flush_out_waits_for_it_before_fetching():
    node, effects = follower(2, 1, 1)
    (req,) = sent(effects, FetchRequest)
    answer(node, req, batches=(batch(0, 1, 3),))  # Flush(3) out
    effects = node.handle(Received(3, BeginQuorumEpochRequest(2, 3)))
    assert node.leader_id == 3 and not sent(effects, FetchRequest)
    assert sent(node.handle(Flushed(3)), FetchRequest, to=3) == [FetchRequest(2, 2, 3, 1)]


def test_flushed_answers_may_be_one_per_flush_or_one_for_several():
    node, effects = follower(2, 1, 1)
    (req,) = sent(effects, FetchRequest)
    answer(node, req, batches=(batch(0, 1, 2),))
    assert sent(node.handle(Flushed(2)), FetchRequest) == [FetchRequest(2, 1, 2, 1)]
    assert node.handle(Flushed(2)) == []  # nothing new
    lead = leader(1)
    lead.handle(ClientAppend(1, 1, ("a",)))
    lead.handle(ClientAppend(1, 2, ("b",)))
    fetch(lead, 2, 3, 1)
    assert lead.handle(Flushed(3)) == [HighWatermark(3)]  # one answer for both appends
    assert lead.handle(Flushed(2)) == [] and lead.flushed_offset == 3  # a late one: no harm


def test_an_error_answer_is_retried_after_the_backoff():
    node, effects = follower(2, 1, 1, retry_backoff_ms=33)
    (req,) = sent(effects, FetchRequest)
    resp = FetchResponse(ErrorCode.NOT_LEADER_OR_FOLLOWER, 1, 1, 0, 0, fetch_offset=0,
                         last_fetched_epoch=0)
    effects = node.handle(Received(1, resp))
    assert not sent(effects) and any(getattr(e, "delay_ms", 0) == 33 for e in effects)
    assert sent(node.handle(TimerFired(REQUEST, 1)), FetchRequest) == [req]


def test_a_silent_leader_makes_a_voter_stand_and_an_observer_look_again():
    node, _ = follower(2, 1, 1)
    node.handle(TimerFired(FETCH))
    assert node.role is RaftRole.CANDIDATE and node.epoch == 2
    observer, _ = follower(9, 1, 1)
    effects = observer.handle(TimerFired(FETCH))
    assert observer.role is RaftRole.UNATTACHED and observer.epoch == 1
    assert sent(effects, FetchRequest, to=1) == [FetchRequest(9, 1, 0, 0)]


def test_an_observer_follows_the_leader_a_voter_names():
    node, effects = make(9)
    (req,) = sent(effects, FetchRequest)
    fenced = FetchResponse(ErrorCode.FENCED_LEADER_EPOCH, 4, 2, 0, 0)
    effects = node.handle(Received(1, fenced))
    assert (node.role, node.epoch, node.leader_id) == (RaftRole.FOLLOWER, 4, 2)
    assert sent(effects, FetchRequest, to=2) == [FetchRequest(9, 4, 0, 0)]
    # same epoch, no leader: keep asking on the timer, no role change
    other, _ = make(9, state=QuorumState(4))
    assert other.handle(Received(1, FetchResponse(ErrorCode.NOT_LEADER_OR_FOLLOWER, 4, -1, 0,
                                                  0))) == []


def test_a_higher_epoch_answer_moves_the_follower_to_the_new_leader():
    node, effects = follower(2, 1, 1)
    (req,) = sent(effects, FetchRequest)
    effects = node.handle(Received(1, FetchResponse(ErrorCode.FENCED_LEADER_EPOCH, 3, 3, 0, 0)))
    assert (node.role, node.epoch, node.leader_id) == (RaftRole.FOLLOWER, 3, 3)


def test_a_follower_refuses_votes_in_its_epoch():
    node, _ = follower(2, 1, 1)
    assert sent(node.handle(Received(3, VoteRequest(1, 3, 5, 5))))[0].vote_granted is False


def test_the_fetch_timer_is_spread_so_followers_of_one_leader_do_not_stand_together():
    node, effects = follower(2, 1, 1)
    cfg = node.config
    assert cfg.fetch_timeout_jitter_ms > 0
    [armed] = [e for e in effects if isinstance(e, ArmTimer) and e.kind == FETCH]
    assert (armed.delay_ms, armed.jitter_ms) == (cfg.fetch_timeout_ms,
                                                 cfg.fetch_timeout_jitter_ms)
    (req,) = sent(effects, FetchRequest)
    [rearmed] = [e for e in answer(node, req, batches=(batch(0, 1),))
                 if isinstance(e, ArmTimer) and e.kind == FETCH]
    assert rearmed.jitter_ms == cfg.fetch_timeout_jitter_ms
