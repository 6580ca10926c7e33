"""A ``RaftView`` of a ``RaftWorld``: what the invariants read, nothing they do not. A voter's
facts are memoised on the voter (``Voter.memo_facts``) until the world changes it."""

from __future__ import annotations

from fsm.raft.effects import REQUEST
from invariants.raft import RaftView, VoterFacts
from model_check.raft.voter import Voter
from model_check.raft.world import RaftWorld


def facts_of(x: Voter) -> VoterFacts:
    if x.memo_facts is None:
        x.memo_facts = VoterFacts(
            x.node_id, x.alive, None if x.role is None else x.role.value, x.epoch, x.hw,
            x.quorum.epoch, x.quorum.voted_id, x.entries(), x.entries(durable_only=True),
            x.applied, x.heard, x.leader,
            frozenset() if x.node is None else frozenset(x.node.parked),
            frozenset(dest for kind, dest in x.timers if kind == REQUEST))
    return x.memo_facts


def view_of(w: RaftWorld) -> RaftView:
    voters = tuple(facts_of(x) for _, x in sorted(w.voters.items()))
    committed = tuple(sorted(((o, e, r, c) for (o, e, r), c in w.committed.items()),
                             key=lambda t: (t[0], t[1], repr(t[2]))))
    return RaftView(voters, len(w.voters) // 2 + 1, w.elected, committed, w.conflicts,
                    w.pending())
