"""Each Raft invariant fires on a hand-built bad state (and its premise holds there) and is
quiet on the good state next to it; the catalogue's file is generated from the docstrings."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from invariants.raft import CATALOGUE, RaftView, VoterFacts, catalogue_markdown
from invariants.raft import catalogue as c


def log(*entries: tuple[int, Any]) -> dict[int, tuple[int, Any]]:
    return dict(enumerate(entries))


def voter(node_id: int, entries: dict | None = None, durable: dict | None = None,
          role: str | None = "follower", epoch: int = 1, hw: int = 0, alive: bool = True,
          quorum: tuple[int, int] = (1, -1), applied: tuple = (), heard: int = 0
          ) -> VoterFacts:
    entries = entries or {}
    return VoterFacts(node_id, alive, role if alive else None, epoch, hw, quorum[0], quorum[1],
                      entries, entries if durable is None else durable, applied, heard)


def view(*voters: VoterFacts, elected: set | None = None, committed: tuple = (),
         conflicts: tuple = ()) -> RaftView:
    return RaftView(tuple(voters), len(voters) // 2 + 1, frozenset(elected or ()),
                    committed, conflicts, False)


def fires(inv: Any, *views: RaftView) -> list[str]:
    assert inv.premise(*views), f"{inv.name}: premise does not hold on the bad state"
    return [v.detail for v in inv.check(*views)]


A, B, X = (1, "a"), (1, "b"), (2, "x")


def test_one_leader_per_epoch() -> None:
    good = view(voter(1), voter(2), voter(3), elected={(1, 1), (2, 2)})
    assert fires(c.one_leader_per_epoch, good) == []
    bad = replace(good, elected=frozenset({(1, 1), (1, 3)}))
    assert fires(c.one_leader_per_epoch, bad) == [
        "voters 1 and 3 were both elected leader of epoch 1"]


def test_log_matching() -> None:
    good = view(voter(1, log(A, B)), voter(2, log(A, X)), voter(3, log(A)))
    assert fires(c.log_matching, good) == []
    bad = view(voter(1, log(A, X)), voter(2, log(B, X)), voter(3))
    assert fires(c.log_matching, bad) == [
        "voters 1 and 2 share epoch 2 at offset 1 but differ at 0: 'a'@1 vs 'b'@1"]


def test_leader_completeness() -> None:
    committed = ((0, 1, "a", 1),)
    good = view(voter(1, log(A), role="leader", epoch=2), voter(2, log(A)), voter(3),
                committed=committed)
    assert fires(c.leader_completeness, good) == []
    bad = view(voter(1, log(X), role="leader", epoch=2), voter(2, log(A)), voter(3, log(A)),
               committed=committed)
    assert fires(c.leader_completeness, bad) == [
        "leader 1 of epoch 2 holds 'x'@2 at offset 0, committed as 'a'@1 in epoch 1"]
    # a leader of the very epoch the entry was committed in is not "later"
    same = view(voter(1, log(X), role="leader", epoch=1), voter(2), voter(3),
                committed=committed)
    assert not c.leader_completeness.premise(same)


def test_leaders_step_down_on_a_higher_epoch() -> None:
    good = view(voter(1, role="leader", epoch=2, heard=2), voter(2, heard=3), voter(3))
    assert fires(c.leaders_step_down_on_a_higher_epoch, good) == []
    bad = view(voter(1, role="leader", epoch=2, heard=3), voter(2), voter(3))
    assert fires(c.leaders_step_down_on_a_higher_epoch, bad) == [
        "voter 1 still leads epoch 2 after hearing of epoch 3"]


def test_state_machine_safety() -> None:
    good = view(voter(1, applied=(A, B)), voter(2, applied=(A,)), voter(3))
    assert fires(c.state_machine_safety, good) == []
    bad = view(voter(1, applied=(A, B)), voter(2, applied=(A, X)), voter(3))
    assert fires(c.state_machine_safety, bad) == [
        "voters 1 and 2 applied different entries at offset 1: 'b'@1 vs 'x'@2"]
    again = replace(good, conflicts=((2, 0, A, X),))
    assert fires(c.state_machine_safety, again) == [
        "voter 2 applied 'a'@1 at offset 0, later 'x'@2"]


def test_one_committed_entry_per_offset() -> None:
    good = view(voter(1), voter(2), voter(3), committed=((0, 1, "a", 1), (1, 1, "b", 2)))
    assert fires(c.one_committed_entry_per_offset, good) == []
    bad = view(voter(1), voter(2), voter(3), committed=((0, 1, "a", 1), (0, 2, "x", 2)))
    assert fires(c.one_committed_entry_per_offset, bad) == [
        "offset 0 was committed as 'a'@1 and as 'x'@2"]


def test_high_watermark_within_durable_majority() -> None:
    good = view(voter(1, log(A, B), role="leader", hw=2), voter(2, log(A, B)), voter(3))
    assert fires(c.high_watermark_within_durable_majority, good) == []
    # voter 2 holds both, but only the first is flushed: acknowledged before fsync
    bad = view(voter(1, log(A, B), role="leader", hw=2),
               voter(2, log(A, B), durable=log(A)), voter(3))
    assert fires(c.high_watermark_within_durable_majority, bad) == [
        "voter 1 (leader, epoch 1) reports high watermark 2 but only voters [1] hold its "
        "entries below it durably"]


def test_committed_never_lost() -> None:
    committed = ((0, 1, "a", 1),)
    good = view(voter(1, log(A)), voter(2, log(A)), voter(3, log(X)), committed=committed)
    assert fires(c.committed_never_lost, good) == []
    bad = view(voter(1, log(A)), voter(2, log(A), durable={}), voter(3, log(X)),
               committed=committed)
    assert fires(c.committed_never_lost, bad) == [
        "committed 'a'@1 at offset 0 (epoch 1) is held durably only by voters [1]"]


def test_high_watermark_never_moves_back() -> None:
    before = view(voter(1, log(A, B), hw=2), voter(2), voter(3))
    assert fires(c.high_watermark_never_moves_back, before, before) == []
    after = view(voter(1, log(A, B), hw=1), voter(2), voter(3))
    assert fires(c.high_watermark_never_moves_back, before, after) == [
        "voter 1 (follower -> follower) high watermark 2 -> 1"]
    crashed = view(voter(1, log(A, B), alive=False), voter(2), voter(3))
    assert c.high_watermark_never_moves_back.check(before, crashed) == []  # a crash resets it


def test_durable_epoch_never_decreases() -> None:
    before = view(voter(1, quorum=(3, -1)), voter(2), voter(3))
    after = view(voter(1, quorum=(2, -1), alive=False), voter(2), voter(3))
    assert fires(c.durable_epoch_never_decreases, before, before) == []
    assert fires(c.durable_epoch_never_decreases, before, after) == [
        "voter 1's durable epoch 3 -> 2"]


def test_durable_vote_never_changes() -> None:
    before = view(voter(1, quorum=(3, 2)), voter(2), voter(3))
    forgot = view(voter(1, quorum=(3, -1)), voter(2), voter(3))
    later = view(voter(1, quorum=(4, 3)), voter(2), voter(3))
    assert fires(c.durable_vote_never_changes, before, forgot) == []
    assert fires(c.durable_vote_never_changes, before, later) == []
    other = view(voter(1, quorum=(3, 3)), voter(2), voter(3))
    assert fires(c.durable_vote_never_changes, before, other) == [
        "voter 1 voted for 2 in epoch 3, then 3"]


def test_followers_keep_fetching() -> None:
    inv = c.followers_keep_fetching
    lead = VoterFacts(1, True, "leader", 2, 0, 2, 1, {}, {}, (), 0, 1, frozenset({2}))
    parked = VoterFacts(2, True, "follower", 2, 0, 2, 1, {}, {}, (), 0, 1)
    silent = VoterFacts(3, True, "follower", 2, 0, 2, 1, {}, {}, (), 0, 1)
    resending = VoterFacts(3, True, "follower", 2, 0, 2, 1, {}, {}, (), 0, 1, frozenset(),
                           frozenset({1}))
    assert fires(inv, view(lead, parked, silent)) == [
        "voter 3 follows 1 in epoch 2 with no Fetch parked there and no request to resend"]
    assert fires(inv, view(lead, parked, resending)) == []
    stale = VoterFacts(3, True, "follower", 1, 0, 1, -1, {}, {}, (), 0, 1)  # an older epoch
    assert fires(inv, view(lead, parked, stale)) == []


def test_every_invariant_has_a_test_here() -> None:
    names = {inv.name for inv in CATALOGUE}
    tested = {n[len("test_"):] for n in globals() if n.startswith("test_")}
    assert names <= tested, names - tested


def test_specs_raft_invariants_md_is_up_to_date() -> None:
    committed = Path(__file__).resolve().parents[3] / "specs" / "raft-invariants.md"
    assert committed.read_text() == catalogue_markdown(), \
        "regenerate: python -m invariants.raft > specs/raft-invariants.md"
