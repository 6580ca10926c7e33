"""BeginQuorumEpoch, EndQuorumEpoch and Resign, and DescribeQuorum."""

from __future__ import annotations

from fsm.errors import ErrorCode
from fsm.raft.effects import ELECTION, FETCH, REQUEST, ArmTimer
from fsm.raft.events import ClientAppend, Received, Resign, TimerFired
from fsm.raft.log_summary import QuorumState
from fsm.raft.messages import (
    BeginQuorumEpochRequest,
    BeginQuorumEpochResponse,
    DescribeQuorumRequest,
    DescribeQuorumResponse,
    EndQuorumEpochRequest,
    EndQuorumEpochResponse,
    ReplicaState,
)
from fsm.raft.roles import RaftRole
from tests.unit.raft.helpers import fetch, follower, leader, make, sent


def test_the_leader_resends_begin_quorum_epoch_until_answered_or_fetched():
    node = leader(1, voters=(1, 2, 3, 4))
    node.handle(Received(2, BeginQuorumEpochResponse(ErrorCode.NONE, 1, 1)))
    fetch(node, 3, 1, 1)
    assert node.handle(TimerFired(REQUEST, 2)) == []
    assert node.handle(TimerFired(REQUEST, 3)) == []
    assert sent(node.handle(TimerFired(REQUEST, 4))) == [BeginQuorumEpochRequest(1, 1)]


def test_a_stale_begin_quorum_epoch_is_fenced():
    node, _ = make(2, state=QuorumState(5))
    effects = node.handle(Received(1, BeginQuorumEpochRequest(4, 1)))
    assert sent(effects) == [BeginQuorumEpochResponse(ErrorCode.FENCED_LEADER_EPOCH, 5, -1)]
    assert node.role is RaftRole.UNATTACHED


def test_resign_sends_end_quorum_epoch_naming_the_most_caught_up_first():
    node = leader(1, voters=(1, 2, 3, 4))
    node.handle(ClientAppend(1, 1, ("a",)))
    fetch(node, 3, 2, 1)
    fetch(node, 4, 1, 1)
    effects = node.handle(Resign())
    assert node.role is RaftRole.RESIGNED and node.epoch == 1
    assert set(sent(effects)) == {EndQuorumEpochRequest(1, 1, (3, 4, 2))}
    assert ArmTimer(ELECTION, 1000, 1000) in effects
    assert not node.parked and not any(isinstance(e, ArmTimer) and e.kind == "parked"
                                       for e in effects)
    node.handle(Received(3, EndQuorumEpochResponse(ErrorCode.NONE, 1, 1)))
    assert node.handle(TimerFired(REQUEST, 3)) == []
    assert sent(node.handle(TimerFired(REQUEST, 2))) == [EndQuorumEpochRequest(1, 1, (3, 4, 2))]
    assert make(2)[0].handle(Resign()) == []  # not a leader: nothing


def test_a_follower_told_its_leader_resigned_stands_soon_first_successor_first():
    first, _ = follower(3, 1, 1, retry_backoff_ms=20)
    effects = first.handle(Received(1, EndQuorumEpochRequest(1, 1, (3, 4, 2))))
    assert ArmTimer(FETCH, 0) in effects
    assert sent(effects) == [EndQuorumEpochResponse(ErrorCode.NONE, 1, 1)]
    second, _ = follower(4, 1, 1, voters=(1, 2, 3, 4), retry_backoff_ms=20)
    assert ArmTimer(FETCH, 20) in second.handle(Received(1, EndQuorumEpochRequest(1, 1,
                                                                                  (3, 4, 2))))
    first.handle(TimerFired(FETCH))
    assert first.role is RaftRole.CANDIDATE and first.epoch == 2


def test_describe_quorum_at_the_leader_lists_voters_and_observers_with_their_times():
    node = leader(1)
    fetch(node, 2, 1, 1, now=100)  # caught up at 100
    node.handle(ClientAppend(1, 1, ("a",)))
    fetch(node, 2, 1, 1, now=150)  # behind at 150
    fetch(node, 9, 2, 1, now=160)  # an observer, caught up
    (resp,) = sent(node.handle(Received(7, DescribeQuorumRequest(), 200)))
    assert resp == DescribeQuorumResponse(
        ErrorCode.NONE, 1, 1, 1,
        (ReplicaState(1, 2, 200, 200), ReplicaState(2, 1, 150, 100), ReplicaState(3, -1)),
        (ReplicaState(9, 2, 160, 160),))


def test_describe_quorum_elsewhere_is_not_leader():
    node, _ = follower(2, 1, 4)
    (resp,) = sent(node.handle(Received(7, DescribeQuorumRequest())))
    assert resp.error is ErrorCode.NOT_LEADER_OR_FOLLOWER and resp.leader_id == 1
