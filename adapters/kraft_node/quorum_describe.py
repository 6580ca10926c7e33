"""``kcontrol quorum describe``'s work (Kafka's ``kafka-metadata-quorum.sh describe``): ask
the controllers for DescribeQuorum, follow to the leader, and lay the answer out as Kafka's
tool does (``--status``: one ``Name: value`` line each; ``--replication``: one row per
replica) or as JSON.

Only the leader answers DescribeQuorum; a voter that is not answers NOT_LEADER_OR_FOLLOWER
naming the leader it knows. :func:`ask_leader` tries the given controllers in turn and, when
one names a leader it has an address for (the voters a controller lists in its
``controller.quorum.voters`` are learnt from DescribeCluster where the node serves it), asks
that one. Every failure is a :class:`QuorumToolError` saying what was tried.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import Any

from adapters.kraft_node.wire_client import WireClient, WireError
from fsm.errors import ErrorCode
from fsm.raft.messages import DescribeQuorumRequest, DescribeQuorumResponse, ReplicaState

Address = tuple[str, int]
MAX_HOPS = 8


class QuorumToolError(Exception):
    """What went wrong, in one line a person can act on."""


def ask_leader(addresses: Sequence[Address], timeout: float,
               voters: Callable[[Address], dict[int, Address]] | None = None,
               ) -> DescribeQuorumResponse:
    """The leader's DescribeQuorum answer. ``voters(address)``: the voters' addresses as the
    node at ``address`` knows them (or {}), used to reach a leader not in ``addresses``."""
    queue = list(addresses)
    known: dict[int, Address] = {}
    problems: list[str] = []
    asked: set[Address] = set()
    hops = 0
    while queue and hops < MAX_HOPS:
        address = queue.pop(0)
        if address in asked:
            continue
        asked.add(address)
        hops += 1
        where = f"{address[0]}:{address[1]}"
        try:
            with WireClient(*address, timeout=timeout) as client:
                answer = client.call_value(DescribeQuorumRequest())
        except WireError as e:
            problems.append(str(e))
            continue
        assert isinstance(answer, DescribeQuorumResponse)
        if answer.error is ErrorCode.NONE:
            return answer
        if answer.error is not ErrorCode.NOT_LEADER_OR_FOLLOWER:
            problems.append(f"{where} answered {answer.error.name}")
            continue
        leader = answer.leader_id
        problems.append(f"{where} is not the leader (leader: "
                        f"{leader if leader >= 0 else 'none known'}, epoch {answer.leader_epoch})")
        if leader < 0:
            continue
        if leader not in known and voters is not None:
            with contextlib.suppress(WireError):
                known.update(voters(address))
        if leader in known and known[leader] not in asked:
            queue.insert(0, known[leader])
    raise QuorumToolError("no leader answered DescribeQuorum: " + "; ".join(problems))


def _leader_state(q: DescribeQuorumResponse) -> ReplicaState | None:
    return next((v for v in q.current_voters if v.replica_id == q.leader_id), None)


def status(q: DescribeQuorumResponse, cluster_id: str | None) -> dict[str, Any]:
    """Kafka's ``--status`` figures: the follower furthest behind the leader's log end, and
    how long ago (by the leader's clock) it was last caught up."""
    leader = _leader_state(q)
    lagging = min(q.current_voters, key=lambda v: v.log_end_offset, default=None)
    if leader is None or lagging is None:
        lag, lag_ms = -1, -1
    else:
        lag = leader.log_end_offset - lagging.log_end_offset
        if lagging.replica_id == leader.replica_id:
            lag_ms = 0
        elif leader.last_caught_up_ms >= 0 and lagging.last_caught_up_ms >= 0:
            lag_ms = leader.last_caught_up_ms - lagging.last_caught_up_ms
        else:
            lag_ms = -1
    return {"ClusterId": cluster_id, "LeaderId": q.leader_id, "LeaderEpoch": q.leader_epoch,
            "HighWatermark": q.high_watermark, "MaxFollowerLag": lag,
            "MaxFollowerLagTimeMs": lag_ms,
            "CurrentVoters": [v.replica_id for v in q.current_voters],
            "CurrentObservers": [o.replica_id for o in q.observers]}


def status_text(figures: dict[str, Any]) -> str:
    """``Name:`` padded to 24 columns, then the value; id lists as ``[1,2,3]``."""
    lines = []
    for name, value in figures.items():
        text = ("[" + ",".join(map(str, value)) + "]" if isinstance(value, list)
                else "" if value is None else str(value))
        lines.append(f"{name + ':':<24}{text}")
    return "\n".join(lines)


HEADERS = ("NodeId", "LogEndOffset", "Lag", "LastFetchTimestamp", "LastCaughtUpTimestamp",
           "Status")


def replication(q: DescribeQuorumResponse) -> list[dict[str, Any]]:
    """One row per replica: the leader, its followers, then the observers; the lag is behind
    the leader's log end offset."""
    leader = _leader_state(q)
    end = leader.log_end_offset if leader is not None else q.high_watermark
    ordered = ([(leader, "Leader")] if leader is not None else []) + \
        [(v, "Follower") for v in q.current_voters if v.replica_id != q.leader_id] + \
        [(o, "Observer") for o in q.observers]
    return [{"NodeId": r.replica_id, "LogEndOffset": r.log_end_offset,
             "Lag": end - r.log_end_offset, "LastFetchTimestamp": r.last_fetch_ms,
             "LastCaughtUpTimestamp": r.last_caught_up_ms, "Status": status_name}
            for r, status_name in ordered]


def replication_text(rows: list[dict[str, Any]]) -> str:
    """Kafka's table: each column as wide as its widest cell, a tab after each."""
    cells = [list(HEADERS)] + [[str(row[h]) for h in HEADERS] for row in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(HEADERS))]
    return "\n".join("".join(c.ljust(w) + "\t" for c, w in zip(line, widths, strict=True))
                     for line in cells)
