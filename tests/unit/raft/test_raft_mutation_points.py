"""The mutation points of ``fsm.raft.core``'s docstring: each named function, replaced as the
docstring says, makes its bug -- shown here on a hand-built situation where the clean core
does the right thing and the patched one does not (the model checker's mutants patch the
same attributes)."""

from __future__ import annotations

from fsm.raft import durable, election, leader_state, node_log, transitions
from fsm.raft.effects import TruncateTo
from fsm.raft.events import ClientAppend, Received
from fsm.raft.leader_state import majority_offset
from fsm.raft.log_summary import QuorumState
from fsm.raft.messages import BeginQuorumEpochRequest, FetchRequest, VoteRequest
from fsm.raft.roles import RaftRole
from tests.unit.raft.helpers import answer, batch, fetch, follower, leader, log_of, make, of, sent


def test_a_vote_granted_without_the_up_to_date_check(monkeypatch):
    def stale_candidate() -> bool:
        node, _ = make(2, state=QuorumState(1, 1, -1), log=log_of((1, 4)))
        effects = node.handle(Received(3, VoteRequest(2, 3, 1, 1)))  # it lacks [1, 4)
        return sent(effects)[0].vote_granted

    assert stale_candidate() is False
    monkeypatch.setattr(election, "log_up_to_date", lambda *a: True)
    assert stale_candidate() is True


def test_b_the_high_watermark_counted_on_an_older_epochs_entries(monkeypatch):
    def figure_8() -> int:
        node = leader(1, log=log_of((2, 2)), epoch=3)  # epoch 2 entries [0, 2), LC at 2
        fetch(node, 2, 2, 2)
        return node.high_watermark

    assert figure_8() == 0
    monkeypatch.setattr(leader_state, "next_high_watermark",
                        lambda cur, end, offs, maj, start: max(cur, majority_offset(end, offs,
                                                                                    maj)))
    assert figure_8() == 2


def test_c_a_follower_truncating_to_its_high_watermark_on_becoming_follower(monkeypatch):
    def attach() -> list:
        node, _ = make(2, state=QuorumState(1), log=log_of((1, 5)))
        node.high_watermark = 3
        return of(node.handle(Received(1, BeginQuorumEpochRequest(2, 1))), TruncateTo)

    assert attach() == []
    monkeypatch.setattr(transitions, "log_on_becoming_follower",
                        lambda node: node_log.truncate(node, node.high_watermark))
    assert attach() == [TruncateTo(3)]


def test_d_acknowledging_before_fsync(monkeypatch):
    def follower_acks() -> list:
        node, effects = follower(2, 1, 1)
        (req,) = sent(effects, FetchRequest)
        return sent(answer(node, req, batches=(batch(0, 1, 2),)), FetchRequest)

    def leader_counts() -> int:
        node = leader(1)  # LeaderChange flushed: end 1
        node.handle(ClientAppend(1, 1, ("a",)))  # not flushed
        fetch(node, 2, 2, 1)
        return node.high_watermark

    assert follower_acks() == [] and leader_counts() == 1
    monkeypatch.setattr(durable, "durable_end", lambda node: node.end_offset)
    assert follower_acks() == [FetchRequest(2, 1, 2, 1)]  # fetches past what is on disk
    assert leader_counts() == 2


def test_e_a_leader_not_stepping_down_on_a_higher_epoch(monkeypatch):
    def challenged() -> tuple:
        node = leader(1)
        node.handle(Received(2, VoteRequest(5, 2, 1, 1)))
        return node.role, node.epoch

    assert challenged() == (RaftRole.VOTED, 5)
    original = transitions.on_higher_epoch

    def stubborn(node, epoch, leader_id, vote_for=-1):
        if node.role is RaftRole.LEADER:
            return []
        return original(node, epoch, leader_id, vote_for)

    monkeypatch.setattr(transitions, "on_higher_epoch", stubborn)
    assert challenged() == (RaftRole.LEADER, 1)


def test_the_core_docstring_names_every_mutation_point():
    import fsm.raft.core as core

    for name in ("election.log_up_to_date", "leader_state.next_high_watermark",
                 "transitions.log_on_becoming_follower", "durable.durable_end",
                 "transitions.on_higher_epoch"):
        assert f"fsm.raft.{name}" in core.__doc__, name
