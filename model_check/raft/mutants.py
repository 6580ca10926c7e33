"""Raft mutants: patches from outside ``fsm/`` that put back the classic Raft and Kafka
replication bugs, each with the shipped Raft scenario that finds it and the length of the
shortest counterexample. Each replaces one of the core's mutation points -- module-level
functions every caller looks up at call time (``fsm.raft.core``'s docstring lists them) --
for the block; the core carries no flag.

    kcontrol check raft-smoke --mutant raft-ack-before-fsync
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any

from model_check import mutants
from model_check.mutants import Mutant, UnknownMutant, _Patches


def _vote_without_log_check(p: _Patches) -> None:
    """A voter grants its vote without comparing logs: a candidate missing committed entries
    can win, and its log overwrites them (Raft's election restriction, KIP-595 Vote)."""
    from fsm.raft import election

    p.setattr(election, "log_up_to_date", lambda *_a: True)


def _commit_older_epoch(p: _Patches) -> None:
    """The leader advances the high watermark over entries of an earlier epoch held by a
    majority, before an entry of its own epoch is (Raft's Figure 8)."""
    from fsm.raft import leader_state

    def next_high_watermark(current: int, leader_end: int, voter_offsets: Any, majority: int,
                            epoch_start: int) -> int:
        return max(current, leader_state.majority_offset(leader_end, voter_offsets, majority))

    p.setattr(leader_state, "next_high_watermark", next_high_watermark)


def _truncate_to_hw_on_follow(p: _Patches) -> None:
    """A node that starts following truncates its log to its high watermark (KIP-101: the HW
    a follower knows lags the leader's, so it drops committed records)."""
    from fsm.raft import node_log, transitions

    p.setattr(transitions, "log_on_becoming_follower",
              lambda node: node_log.truncate(node, node.high_watermark))


def _ack_before_fsync(p: _Patches) -> None:
    """A node counts its unflushed log end as its own: a follower fetches from (acknowledges)
    records not on disk, a leader counts its own unflushed records toward the HW."""
    from fsm.raft import durable

    p.setattr(durable, "durable_end", lambda node: node.end_offset)


def _leader_ignores_higher_epoch(p: _Patches) -> None:
    """A leader that hears of a higher epoch keeps leading (and answering fetches) in its
    old one instead of stepping down."""
    from fsm.raft import transitions
    from fsm.raft.roles import RaftRole

    original = transitions.on_higher_epoch

    def on_higher_epoch(node: Any, epoch: int, leader_id: int, vote_for: int = -1) -> Any:
        if node.role is RaftRole.LEADER:
            return []
        return original(node, epoch, leader_id, vote_for)

    p.setattr(transitions, "on_higher_epoch", on_higher_epoch)


RAFT_MUTANTS: tuple[Mutant, ...] = (
    Mutant("raft-vote-without-log-check",
           "a vote is granted without the candidate's log being up to date",
           "Raft §5.4.1; KIP-595 Vote", "raft-election", 8, _vote_without_log_check),
    Mutant("raft-commit-older-epoch",
           "the high watermark counts an older epoch's entries before one of its own",
           "Raft §5.4.2 (Figure 8)", "raft-figure8", 6, _commit_older_epoch),
    Mutant("raft-truncate-to-hw-on-follow",
           "a new follower truncates its log to its high watermark",
           "KIP-101", "raft-standard", 4, _truncate_to_hw_on_follow),
    Mutant("raft-ack-before-fsync",
           "unflushed offsets count toward the high watermark",
           "KIP-595 (durable fetch offsets)", "raft-smoke", 7, _ack_before_fsync),
    Mutant("raft-leader-ignores-higher-epoch",
           "a leader does not step down on hearing a higher epoch",
           "KIP-595 (fencing by epoch)", "raft-election", 2, _leader_ignores_higher_epoch),
)


def get(name: str) -> Mutant:
    for m in RAFT_MUTANTS:
        if m.name == name:
            return m
    raise UnknownMutant(f"no Raft mutant {name!r} (have: {[m.name for m in RAFT_MUTANTS]})")


def patched(name: str | None) -> AbstractContextManager[Mutant | None]:
    """Apply Raft mutant ``name`` for the block (None: the clean core)."""
    return mutants.patched(name, get)
