"""The Raft roles of KIP-595 as a declared table: every role change of a node goes through
``RAFT_ROLE_TABLE.check``.

* ``UNATTACHED`` -- knows an epoch, has no leader and has voted for nobody in it (the start of
  a fresh node, and where a higher epoch without a leader puts anyone).
* ``VOTED`` -- granted its vote in the current epoch (durable before the grant was sent).
* ``CANDIDATE`` -- a voter standing for election in an epoch it bumped and voted itself in.
* ``LEADER`` -- won a majority; appends, answers Fetch, advances the high watermark.
* ``FOLLOWER`` -- knows the leader of the current epoch and fetches from it (observers too).
* ``RESIGNED`` -- a leader stepping down (graceful shutdown, or restarted from a quorum-state
  that names itself leader): it sends EndQuorumEpoch and waits for the next epoch.

A node is UNATTACHED (the table's initial role) until ``Start``; ``Start`` moves it to the role
its durable quorum-state gives -- VOTED, FOLLOWER, or RESIGNED for a restarted leader -- through
the table like any other move.

Observers (brokers, any node not in the voter set) take only UNATTACHED and FOLLOWER: they
never vote nor stand. Their moves are the same pairs of this one table.
"""

from __future__ import annotations

import enum

from fsm.transition_table import TransitionTable, table


class RaftRole(enum.Enum):
    UNATTACHED = "unattached"
    VOTED = "voted"
    CANDIDATE = "candidate"
    LEADER = "leader"
    FOLLOWER = "follower"
    RESIGNED = "resigned"


_R = RaftRole

RAFT_ROLE_TABLE: TransitionTable[RaftRole] = table(
    "raft-role",
    RaftRole,
    _R.UNATTACHED,
    {
        _R.UNATTACHED: [
            _R.UNATTACHED,  # a higher epoch with no leader known
            _R.VOTED,  # grants a Vote (log up to date, no vote yet in the epoch)
            _R.CANDIDATE,  # election timeout (voters only)
            _R.FOLLOWER,  # BeginQuorumEpoch, or a response naming the epoch's leader
            _R.RESIGNED,  # start: the durable quorum-state names this node the leader
        ],
        _R.VOTED: [
            _R.UNATTACHED,  # a higher epoch with no leader known
            _R.VOTED,  # a higher epoch's candidate gets the vote
            _R.CANDIDATE,  # election timeout
            _R.FOLLOWER,  # the epoch's leader is known
        ],
        _R.CANDIDATE: [
            _R.UNATTACHED,  # a higher epoch with no leader known
            _R.VOTED,  # a higher epoch's candidate gets the vote
            _R.CANDIDATE,  # election timeout (after backoff): stands again, epoch + 1
            _R.LEADER,  # a majority of voters granted
            _R.FOLLOWER,  # another node leads this or a higher epoch
        ],
        _R.LEADER: [
            _R.UNATTACHED,  # a higher epoch with no leader known
            _R.VOTED,  # a higher epoch's candidate gets the vote
            _R.FOLLOWER,  # another node leads a higher epoch
            _R.RESIGNED,  # graceful resignation (shutdown): EndQuorumEpoch
        ],
        _R.FOLLOWER: [
            _R.UNATTACHED,  # a higher epoch with no leader known
            _R.VOTED,  # a higher epoch's candidate gets the vote
            _R.CANDIDATE,  # fetch timeout: the leader is gone (voters only)
            _R.FOLLOWER,  # a new leader in a higher epoch
        ],
        _R.RESIGNED: [
            _R.UNATTACHED,  # a higher epoch with no leader known
            _R.VOTED,  # a higher epoch's candidate gets the vote
            _R.CANDIDATE,  # election timeout: nobody else won
            _R.FOLLOWER,  # another node leads a higher epoch
        ],
    },
)


def role_label(node_id: int) -> str:
    """How a node is named in the role table's errors: ``node 3000``."""
    return f"node {node_id}"
