"""The Raft invariants of the metadata quorum (KIP-595; Raft's safety properties as the Raft
paper states them, and the Kafka data-loss bugs they guard against), over ``RaftView``; the
same registry as the other catalogues (``invariants.registry``)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from invariants.raft.view import Entry, RaftView, VoterFacts
from invariants.registry import QUIESCENT, STATE, TRANSITION, Invariant, invariant

LEADER = "leader"


def _leaders(view: RaftView) -> list[VoterFacts]:
    return [v for v in view.voters if v.alive and v.role == LEADER]


def _show(entry: Entry | None) -> str:
    return "nothing" if entry is None else f"{entry[1]!r}@{entry[0]}"


# -- premises ------------------------------------------------------------------------------
def an_election(view: RaftView) -> bool:
    """Some voter has been elected leader."""
    return bool(view.elected)


def two_logs_share_an_entry(view: RaftView) -> bool:
    """Two voters hold an entry at the same offset in the same epoch."""
    vs = view.voters
    return any(a.entries.get(o) is not None and a.entries.get(o) == b.entries.get(o)
               for i, a in enumerate(vs) for b in vs[i + 1:] for o in a.entries)


def a_leader_after_a_commit(view: RaftView) -> bool:
    """A live leader leads an epoch later than one an entry was committed in."""
    return any(c[3] < v.epoch for v in _leaders(view) for c in view.committed)


def two_voters_applied(view: RaftView) -> bool:
    """Two voters' state machines applied something."""
    return sum(1 for v in view.voters if v.applied) >= 2


def a_leader_that_heard(view: RaftView) -> bool:
    """A live leader has been delivered a message carrying an epoch."""
    return any(v.heard > 0 for v in _leaders(view))


def a_commit(view: RaftView) -> bool:
    """Some entry has been reported committed."""
    return bool(view.committed)


def a_high_watermark(view: RaftView) -> bool:
    """A live voter's node reported a high watermark above 0."""
    return any(v.alive and v.hw > 0 for v in view.voters)


def a_high_watermark_in_both(before: RaftView, after: RaftView) -> bool:
    """A voter alive before and after the step had a high watermark above 0."""
    return any(b.alive and b.hw > 0 and a.alive for b, a in _pairs(before, after))


def a_durable_epoch(before: RaftView, after: RaftView) -> bool:
    """A voter's durable quorum-state names an epoch above 0 before the step."""
    return any(b.quorum_epoch > 0 for b in before.voters)


def _pairs(before: RaftView, after: RaftView) -> zip[tuple[VoterFacts, VoterFacts]]:
    """Each voter before and after the step (both views list the voters in one order)."""
    return zip(before.voters, after.voters, strict=True)


def a_durable_vote(before: RaftView, after: RaftView) -> bool:
    """A voter's durable quorum-state holds a vote before the step."""
    return any(b.voted_id != -1 for b in before.voters)


# -- state invariants ----------------------------------------------------------------------
@invariant(STATE, "KIP-595 (Raft's election safety)", premise=an_election)
def one_leader_per_epoch(view: RaftView) -> Iterator[str]:
    """At most one voter is ever elected leader of an epoch: each voter grants one vote per
    epoch (durable before the grant is sent), and a leader needs a majority of them. Read
    over every election ever made (ghost state), not only the leaders alive now, so two
    leaders of one epoch are caught even if one of them has crashed since."""
    seen: dict[int, int] = {}
    for epoch, leader in sorted(view.elected):
        other = seen.setdefault(epoch, leader)
        if other != leader:
            yield f"voters {other} and {leader} were both elected leader of epoch {epoch}"


@invariant(STATE, "Raft's log matching; KIP-595 Fetch (diverging epoch)",
           premise=two_logs_share_an_entry)
def log_matching(view: RaftView) -> Iterator[str]:
    """If two voters hold an entry at the same offset in the same epoch, they hold the same
    entries at every offset up to it (snapshots included). An epoch's entries are written by
    its one leader, and a follower appends only after its fetch position matched the
    leader's log: a divergence below a shared entry means a follower kept records the
    leader did not have (a skipped truncation, a fetch accepted at a wrong position)."""
    vs = view.voters
    for i, a in enumerate(vs):
        for b in vs[i + 1:]:
            common = sorted(set(a.entries) & set(b.entries), reverse=True)
            top = next((o for o in common if a.entries[o][0] == b.entries[o][0]), None)
            if top is None:
                continue
            for o in common:
                if o <= top and a.entries[o] != b.entries[o]:
                    yield (f"voters {a.node_id} and {b.node_id} share epoch "
                           f"{a.entries[top][0]} at offset {top} but differ at {o}: "
                           f"{_show(a.entries[o])} vs {_show(b.entries[o])}")
                    break


@invariant(STATE, "Raft's leader completeness; KIP-595 Vote (log up to date)",
           premise=a_leader_after_a_commit)
def leader_completeness(view: RaftView) -> Iterator[str]:
    """Every entry committed in an epoch is in the log (or snapshot) of every leader of a
    later epoch. A voter grants its vote only to a candidate whose log is at least as up to
    date as its own, and a committed entry is durable on a majority, so any majority that
    elects a leader includes a voter holding it; a vote granted without that check, or an
    entry counted committed too early, lets a leader win without it."""
    for v in _leaders(view):
        for offset, epoch, record, commit_epoch in view.committed:
            if commit_epoch < v.epoch and v.entries.get(offset) != (epoch, record):
                yield (f"leader {v.node_id} of epoch {v.epoch} holds {_show(v.entries.get(offset))}"
                       f" at offset {offset}, committed as {_show((epoch, record))} in "
                       f"epoch {commit_epoch}")


@invariant(STATE, "KIP-595 (a higher epoch fences the leader)", premise=a_leader_that_heard)
def leaders_step_down_on_a_higher_epoch(view: RaftView) -> Iterator[str]:
    """A live leader leads an epoch at least as high as any epoch a message delivered to it
    carried: every request and response names its sender's epoch, and a leader that hears a
    higher one steps down at once (to follow, vote or wait). A leader that stays on keeps
    accepting writes no quorum will take and answers fetches as a deposed leader."""
    for v in _leaders(view):
        if v.heard > v.epoch:
            yield (f"voter {v.node_id} still leads epoch {v.epoch} after hearing of epoch "
                   f"{v.heard}")


@invariant(STATE, "Raft's state machine safety", premise=two_voters_applied)
def state_machine_safety(view: RaftView) -> Iterator[str]:
    """No two voters' state machines apply different entries at the same offset, and no
    state machine applies an offset again with a different entry (after a restart, or a
    snapshot it loaded). The controllers replay the metadata log into their images: two
    images built from different records at one offset are two different clusters."""
    for voter, offset, before, again in view.conflicts:
        yield (f"voter {voter} applied {_show(before)} at offset {offset}, later "
               f"{_show(again)}")
    vs = view.voters
    for i, a in enumerate(vs):
        for b in vs[i + 1:]:
            for o, (x, y) in enumerate(zip(a.applied, b.applied, strict=False)):
                if x != y:
                    yield (f"voters {a.node_id} and {b.node_id} applied different entries at "
                           f"offset {o}: {_show(x)} vs {_show(y)}")
                    break


@invariant(STATE, "Raft's state machine safety (what the high watermark exposes)",
           premise=a_commit)
def one_committed_entry_per_offset(view: RaftView) -> Iterator[str]:
    """Every offset ever reported committed (below some node's high watermark) holds one
    entry: committing is final, so two different entries committed at one offset mean an
    acknowledged write was replaced (Raft's Figure 8; KIP-101)."""
    by_offset: dict[int, Entry] = {}
    for offset, epoch, record, _ in view.committed:
        first = by_offset.setdefault(offset, (epoch, record))
        if first != (epoch, record):
            yield (f"offset {offset} was committed as {_show(first)} and as "
                   f"{_show((epoch, record))}")


def _holders(view: RaftView, prefix: Mapping[int, Entry], end: int) -> list[int]:
    return [v.node_id for v in view.voters
            if all(v.durable.get(o) == prefix.get(o) for o in range(end))]


@invariant(STATE, "KIP-595 (the high watermark counts durable replicas); Raft's commitment",
           premise=a_high_watermark)
def high_watermark_within_durable_majority(view: RaftView) -> Iterator[str]:
    """A live node's high watermark never exceeds what a majority of voters hold durably:
    every offset below it is flushed (or in a snapshot) on a majority, with the same entries
    as the node's own. A leader that counts a follower's unflushed offsets, or its own, can
    commit what one crash then loses."""
    for v in view.voters:
        if not v.alive or v.hw <= 0:
            continue
        holders = _holders(view, v.entries, v.hw)
        if len(holders) < view.majority:
            yield (f"voter {v.node_id} ({v.role}, epoch {v.epoch}) reports high watermark "
                   f"{v.hw} but only voters {holders} hold its entries below it durably")


@invariant(STATE, "Raft's durability of commits; KIP-101 (a follower truncating to its HW)",
           premise=a_commit)
def committed_never_lost(view: RaftView) -> Iterator[str]:
    """Every entry ever reported committed is held durably (flushed, or in a snapshot that
    covers its offset) by a majority of voters. The world never destroys a disk, so a
    majority always survives: a committed entry held by fewer was truncated away or
    overwritten (a follower that truncated to its high watermark and then led, a leader that
    committed an older epoch's entry)."""
    for offset, epoch, record, commit_epoch in view.committed:
        holders = [v.node_id for v in view.voters if v.durable.get(offset) == (epoch, record)]
        if len(holders) < view.majority:
            yield (f"committed {_show((epoch, record))} at offset {offset} (epoch "
                   f"{commit_epoch}) is held durably only by voters {holders}")


# -- transition invariants -----------------------------------------------------------------
@invariant(TRANSITION, "KIP-595 (the high watermark only grows)",
           premise=a_high_watermark_in_both)
def high_watermark_never_moves_back(before: RaftView, after: RaftView) -> Iterator[str]:
    """A node's high watermark never moves back while its process lives (a leader's as it
    counts its followers, a follower's as it learns the leader's): what was exposed as
    committed stays exposed. A crash resets the process, not the log."""
    for b, a in _pairs(before, after):
        if b.alive and a.alive and a.hw < b.hw:
            yield (f"voter {b.node_id} ({b.role} -> {a.role}) high watermark {b.hw} -> "
                   f"{a.hw}")


@invariant(TRANSITION, "KIP-595 quorum-state (epochs are durable and monotonic)",
           premise=a_durable_epoch)
def durable_epoch_never_decreases(before: RaftView, after: RaftView) -> Iterator[str]:
    """A voter's durable epoch (its quorum-state) never decreases, crash or not: a voter that
    forgot an epoch could vote in it again or follow a deposed leader."""
    for b, a in _pairs(before, after):
        if a.quorum_epoch < b.quorum_epoch:
            yield f"voter {b.node_id}'s durable epoch {b.quorum_epoch} -> {a.quorum_epoch}"


@invariant(TRANSITION, "KIP-595 Vote (one vote per epoch, durable before it is sent)",
           premise=a_durable_vote)
def durable_vote_never_changes(before: RaftView, after: RaftView) -> Iterator[str]:
    """Once a voter's durable quorum-state holds a vote in an epoch, it never holds a vote
    for another candidate in that epoch (it may drop the vote when it learns the epoch's
    leader, as Kafka's quorum-state does): a second vote in one epoch could elect two
    leaders."""
    for b, a in _pairs(before, after):
        if (b.voted_id != -1 and a.quorum_epoch == b.quorum_epoch
                and a.voted_id not in (-1, b.voted_id)):
            yield (f"voter {b.node_id} voted for {b.voted_id} in epoch {b.quorum_epoch}, then "
                   f"{a.voted_id}")


def a_leader_and_a_follower(view: RaftView) -> bool:
    """A live leader and a live voter following it in its epoch."""
    return any(f.alive and f.role == "follower" and f.leader_id == lead.node_id
               and f.epoch == lead.epoch for lead in _leaders(view) for f in view.voters)


@invariant(QUIESCENT, "KIP-595 Fetch (a follower keeps fetching from its leader)",
           premise=a_leader_and_a_follower)
def followers_keep_fetching(view: RaftView) -> Iterator[str]:
    """Once nothing is in flight, every live follower of a live leader in the leader's epoch
    has a Fetch the leader holds parked, or a request to it that it will resend: otherwise it
    falls silent until its fetch timeout and stands for an election nothing called for.
    (Found by the KRaft fault campaign, issue 26: a follower whose snapshot made its pending
    flush durable sent no next Fetch.)"""
    for lead in _leaders(view):
        for f in view.voters:
            if (f.alive and f.role == "follower" and f.leader_id == lead.node_id
                    and f.epoch == lead.epoch and f.node_id not in lead.parked
                    and lead.node_id not in f.resending):
                yield f"voter {f.node_id} follows {lead.node_id} in epoch {lead.epoch} with " \
                      "no Fetch parked there and no request to resend"


CATALOGUE: tuple[Invariant, ...] = (
    one_leader_per_epoch, log_matching, leader_completeness,
    leaders_step_down_on_a_higher_epoch, state_machine_safety,
    one_committed_entry_per_offset, high_watermark_within_durable_majority,
    committed_never_lost, high_watermark_never_moves_back, durable_epoch_never_decreases,
    durable_vote_never_changes, followers_keep_fetching,
)
