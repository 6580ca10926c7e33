"""Start: the first role comes from the durable quorum-state, through the table."""

from __future__ import annotations

import pytest

from fsm.raft.config import RaftConfig
from fsm.raft.core import RaftNode
from fsm.raft.effects import (
    ELECTION,
    REQUEST,
    AppendBatches,
    ArmTimer,
    RoleChanged,
)
from fsm.raft.events import Flushed, Start, TimerFired
from fsm.raft.log_summary import LogSummary, QuorumState
from fsm.raft.messages import EndQuorumEpochRequest, FetchRequest, LeaderChange, VoteRequest
from fsm.raft.roles import RaftRole
from tests.unit.raft.helpers import log_of, make, of, sent


def test_a_fresh_voter_is_unattached_and_arms_its_election_with_the_backoff_as_jitter():
    node, effects = make(election_timeout_ms=700, election_backoff_max_ms=300)
    assert node.role is RaftRole.UNATTACHED and node.epoch == 0
    assert effects == [ArmTimer(ELECTION, 700, 300)]


def test_a_restarted_leader_resigns_and_never_leads_its_old_epoch_again():
    node, effects = make(1, state=QuorumState(4, 1, 1), log=log_of((4, 3)))
    assert node.role is RaftRole.RESIGNED and node.epoch == 4
    assert of(effects, RoleChanged) == [RoleChanged(RaftRole.UNATTACHED, RaftRole.RESIGNED, 4, 1)]
    assert sent(effects, EndQuorumEpochRequest, to=2) == [EndQuorumEpochRequest(4, 1, (2, 3))]
    effects = node.handle(TimerFired(ELECTION))
    assert node.role is RaftRole.CANDIDATE and node.epoch == 5


def test_a_voter_that_voted_keeps_its_vote():
    node, _ = make(2, state=QuorumState(3, -1, 3))
    assert (node.role, node.epoch, node.voted_id) == (RaftRole.VOTED, 3, 3)


def test_a_node_that_knew_the_leader_follows_it_and_fetches_from_its_log_end():
    node, effects = make(2, state=QuorumState(3, 1, -1), log=log_of((1, 2), (3, 4)))
    assert node.role is RaftRole.FOLLOWER and node.leader_id == 1
    assert sent(effects, FetchRequest, to=1) == [FetchRequest(2, 3, 6, 3)]


def test_a_one_voter_quorum_elects_itself_at_once():
    node, effects = make(1, voters=(1,))
    assert node.role is RaftRole.LEADER and node.epoch == 1
    (append,) = of(effects, AppendBatches)
    assert append.batches[0].records == (LeaderChange(1, (1,), (1,)),)
    assert node.handle(Flushed(1)) and node.high_watermark == 1


def test_an_observer_never_stands_and_looks_for_the_leader_at_the_voters_in_turn():
    node, effects = make(9)
    assert node.role is RaftRole.UNATTACHED
    assert not any(isinstance(e, ArmTimer) and e.kind == ELECTION for e in effects)
    assert sent(effects, FetchRequest, to=1) == [FetchRequest(9, 0, 0, 0)]
    effects = node.handle(TimerFired(REQUEST, 1))
    assert sent(effects, FetchRequest, to=2) == [FetchRequest(9, 0, 0, 0)]
    assert node.handle(TimerFired(ELECTION)) == []  # never armed: a stale fire does nothing
    assert not sent(effects, VoteRequest)


def test_events_before_start_twice_started_or_unknown_are_refused_clearly():
    node, _ = make()
    with pytest.raises(ValueError, match="started twice"):
        node.handle(Start())
    with pytest.raises(TypeError, match="not a Raft event"):
        node.handle("hello")
    fresh = RaftNode(RaftConfig(1, (1, 2, 3)), QuorumState(), LogSummary())
    with pytest.raises(ValueError, match="before Start"):
        fresh.handle(Flushed(0))
    with pytest.raises(ValueError, match="at least one voter"):
        RaftNode(RaftConfig(1, ()), QuorumState(), LogSummary())
