"""What a Raft run reached, against what there is to reach: every move of
``RAFT_ROLE_TABLE`` (from the nodes' ``RoleChanged``) and every message type a live voter
handled. Not expected: DescribeQuorum (a tool's request to the leader; the world has no
tools), and observers' moves (the world's nodes are all voters; observers take a subset of
the same pairs)."""

from __future__ import annotations

from fsm.raft.roles import RAFT_ROLE_TABLE

MESSAGES = ("VoteRequest", "VoteResponse", "BeginQuorumEpochRequest",
            "BeginQuorumEpochResponse", "EndQuorumEpochRequest", "EndQuorumEpochResponse",
            "FetchRequest", "FetchResponse", "FetchSnapshotRequest", "FetchSnapshotResponse")


def expected() -> set[tuple[str, ...]]:
    out = {("raft-role", a.value, b.value) for a, b in RAFT_ROLE_TABLE.pairs}
    out |= {("message", m) for m in MESSAGES}
    return out


def unreached(reached: set[tuple[str, ...]]) -> list[tuple[str, ...]]:
    return sorted(expected() - reached)


def lines(reached: set[tuple[str, ...]]) -> list[str]:
    want = expected()
    got = want & reached
    out = [f"coverage: {len(got)} of {len(want)} (role table moves, message types handled)"]
    out += ["  not reached: " + " ".join(item) for item in sorted(want - reached)]
    extra = sorted(reached - want)
    if extra:
        out.append("  also: " + "; ".join(" ".join(item) for item in extra))
    return out
