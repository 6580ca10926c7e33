"""Elections: standing, granting (at most one vote per epoch, only to an up-to-date log,
persisted before the grant is sent), counting, stepping down on a higher epoch."""

from __future__ import annotations

import pytest

from fsm.errors import ErrorCode
from fsm.raft.effects import (
    ELECTION,
    REQUEST,
    AppendBatches,
    ArmTimer,
    CancelTimer,
    Flush,
    PersistQuorumState,
    RoleChanged,
    Send,
)
from fsm.raft.election import log_up_to_date
from fsm.raft.events import Received, TimerFired
from fsm.raft.log_summary import QuorumState
from fsm.raft.messages import (
    BeginQuorumEpochRequest,
    LeaderChange,
    VoteRequest,
    VoteResponse,
)
from fsm.raft.roles import RaftRole
from tests.unit.raft.helpers import leader, log_of, make, of, sent


def index(effects: list, kind: type) -> int:
    return next(i for i, e in enumerate(effects) if isinstance(e, kind))


def test_the_election_timer_makes_a_candidate_that_persists_its_vote_before_asking():
    node, _ = make(1, log=log_of((1, 2), (2, 3)), state=QuorumState(2))
    effects = node.handle(TimerFired(ELECTION))
    assert (node.role, node.epoch, node.voted_id) == (RaftRole.CANDIDATE, 3, 1)
    assert index(effects, PersistQuorumState) < index(effects, Send)
    assert of(effects, PersistQuorumState) == [PersistQuorumState(QuorumState(3, -1, 1))]
    assert sent(effects, VoteRequest) == [VoteRequest(3, 1, 2, 5)] * 2
    assert {e.destination for e in effects if isinstance(e, Send)} == {2, 3}


@pytest.mark.parametrize(("cand", "own", "ok"), [
    ((3, 5), (3, 5), True),   # equal logs
    ((3, 6), (3, 5), True),   # same epoch, longer
    ((3, 4), (3, 5), False),  # same epoch, shorter
    ((4, 1), (3, 9), True),   # later last epoch wins whatever the length
    ((2, 9), (3, 1), False),  # earlier last epoch loses whatever the length
])
def test_log_up_to_date_compares_last_epoch_then_end_offset(cand, own, ok):
    assert log_up_to_date(*cand, *own) is ok


def test_a_vote_is_persisted_before_the_grant_and_given_once_per_epoch():
    node, _ = make(2, state=QuorumState(1))
    effects = node.handle(Received(1, VoteRequest(2, 1, 0, 0)))
    assert index(effects, PersistQuorumState) < index(effects, Send)
    assert of(effects, PersistQuorumState) == [PersistQuorumState(QuorumState(2, -1, 1))]
    assert sent(effects, VoteResponse) == [VoteResponse(ErrorCode.NONE, 2, -1, True)]
    assert node.role is RaftRole.VOTED
    # another candidate of the same epoch: refused; the same one again: granted again
    assert sent(node.handle(Received(3, VoteRequest(2, 3, 0, 0))))[0].vote_granted is False
    again = node.handle(Received(1, VoteRequest(2, 1, 0, 0)))
    assert sent(again)[0].vote_granted is True and not of(again, PersistQuorumState)


def test_a_candidate_missing_entries_is_refused_but_its_epoch_is_taken():
    node, _ = make(2, state=QuorumState(1, 1, -1), log=log_of((1, 4)))
    effects = node.handle(Received(3, VoteRequest(2, 3, 1, 2)))
    assert sent(effects, VoteResponse) == [VoteResponse(ErrorCode.NONE, 2, -1, False)]
    assert (node.role, node.epoch, node.voted_id) == (RaftRole.UNATTACHED, 2, -1)


def test_a_stale_candidate_is_fenced():
    node, _ = make(2, state=QuorumState(5))
    effects = node.handle(Received(3, VoteRequest(4, 3, 9, 9)))
    assert sent(effects) == [VoteResponse(ErrorCode.FENCED_LEADER_EPOCH, 5, -1, False)]
    assert node.epoch == 5


def test_a_majority_of_grants_makes_the_leader_with_its_leader_change_first():
    node, _ = make(1, voters=(1, 2, 3, 4, 5), log=log_of((1, 2)), state=QuorumState(1))
    node.handle(TimerFired(ELECTION))
    grant = VoteResponse(ErrorCode.NONE, 2, -1, True)
    node.handle(Received(2, grant))
    node.handle(Received(2, grant))  # a duplicate is not a second grant
    assert node.role is RaftRole.CANDIDATE
    effects = node.handle(Received(4, grant))
    assert node.role is RaftRole.LEADER and node.leader_id == 1
    assert of(effects, PersistQuorumState) == [PersistQuorumState(QuorumState(2, 1, 1))]
    (append,) = of(effects, AppendBatches)
    (b,) = append.batches
    assert (b.base_offset, b.epoch, b.control) == (2, 2, True)
    assert b.records == (LeaderChange(1, (1, 2, 3, 4, 5), (1, 2, 4)),)
    assert of(effects, Flush) == [Flush(3)]
    assert index(effects, PersistQuorumState) < index(effects, Send)
    assert {e.destination for e in effects if isinstance(e, Send)} == {2, 3, 4, 5}
    assert set(sent(effects)) == {BeginQuorumEpochRequest(2, 1)}
    assert node.epochs == ((1, 0), (2, 2)) and node.end_offset == 3


def test_a_candidate_resends_its_vote_only_to_voters_that_have_not_answered():
    node, _ = make(1, state=QuorumState(1))
    node.handle(TimerFired(ELECTION))
    node.handle(Received(2, VoteResponse(ErrorCode.NONE, 2, -1, False)))
    assert node.handle(TimerFired(REQUEST, 2)) == []  # answered: its timer was cancelled
    effects = node.handle(TimerFired(REQUEST, 3))
    assert sent(effects, VoteRequest, to=3) == [VoteRequest(2, 1, 0, 0)]


def test_an_election_timeout_makes_a_candidate_stand_again_one_epoch_up():
    node, _ = make(1)
    node.handle(TimerFired(ELECTION))
    effects = node.handle(TimerFired(ELECTION))
    assert node.epoch == 2 and node.role is RaftRole.CANDIDATE
    assert of(effects, RoleChanged) == [
        RoleChanged(RaftRole.CANDIDATE, RaftRole.CANDIDATE, 2, -1)]


def test_a_higher_epoch_in_a_vote_answer_steps_the_candidate_down_to_its_leader():
    node, _ = make(1)
    node.handle(TimerFired(ELECTION))
    effects = node.handle(Received(2, VoteResponse(ErrorCode.NONE, 7, 3, False)))
    assert (node.role, node.epoch, node.leader_id) == (RaftRole.FOLLOWER, 7, 3)
    assert of(effects, PersistQuorumState) == [PersistQuorumState(QuorumState(7, 3, -1))]


def test_a_leader_steps_down_on_a_higher_epoch_vote_it_grants():
    node = leader(1)
    effects = node.handle(Received(2, VoteRequest(5, 2, 1, 1)))
    assert (node.role, node.epoch, node.voted_id) == (RaftRole.VOTED, 5, 2)
    assert sent(effects) == [VoteResponse(ErrorCode.NONE, 5, -1, True)]


def test_votes_from_outside_the_voter_set_are_refused():
    node, _ = make(2)
    effects = node.handle(Received(9, VoteRequest(3, 9, 0, 0)))
    assert sent(effects)[0].vote_granted is False and node.epoch == 0
    observer, _ = make(9)
    assert sent(observer.handle(Received(1, VoteRequest(3, 1, 0, 0))))[0].vote_granted is False


def test_a_higher_epoch_keeps_a_running_election_timer_where_it_was():
    """A voter standing (or unattached, or voted) that refuses a higher-epoch candidate with
    a shorter log keeps its election deadline (Kafka's ``transitionToUnattached``): a
    candidate that can never win must not keep the one that can from standing."""
    node, _ = make(2, state=QuorumState(1), log=log_of((1, 4)))
    node.handle(TimerFired(ELECTION))
    assert (node.role, node.epoch) == (RaftRole.CANDIDATE, 2)
    effects = node.handle(Received(3, VoteRequest(3, 3, 1, 2)))  # behind: refused
    assert sent(effects, VoteResponse) == [VoteResponse(ErrorCode.NONE, 3, -1, False)]
    assert (node.role, node.epoch) == (RaftRole.UNATTACHED, 3)
    assert not [e for e in effects if isinstance(e, (ArmTimer, CancelTimer))
                and e.kind == ELECTION]
    assert (ELECTION, -1) in node.armed
    # the same again in the next epoch, now unattached: still the same deadline
    effects = node.handle(Received(3, VoteRequest(4, 3, 1, 2)))
    assert not [e for e in effects if isinstance(e, (ArmTimer, CancelTimer))
                and e.kind == ELECTION]
    # the timer fires: it stands, one epoch up, and can win
    node.handle(TimerFired(ELECTION))
    assert (node.role, node.epoch) == (RaftRole.CANDIDATE, 5)


def test_a_follower_that_hears_a_higher_epoch_arms_a_fresh_election_timer():
    node, _ = make(2, state=QuorumState(1, 1, -1), log=log_of((1, 4)))
    assert node.role is RaftRole.FOLLOWER and (ELECTION, -1) not in node.armed
    effects = node.handle(Received(3, VoteRequest(2, 3, 1, 2)))
    assert node.role is RaftRole.UNATTACHED
    assert [e for e in effects if isinstance(e, ArmTimer) and e.kind == ELECTION]
