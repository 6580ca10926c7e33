"""The replica table (seed 000, "ReplicaStateMachine").

States:

* ``NonExistentReplica`` -- the replica never existed or was deleted successfully.
* ``NewReplica`` -- brand new, from a partition reassignment or a topic
  creation; it can be a follower in this state.
* ``OnlineReplica`` -- started and eligible to be leader or follower.
* ``OfflineReplica`` -- shut down by controlled shutdown, failed, or kicked
  out of the replica set by a reassignment.
* ``ReplicaDeletionStarted`` -- told to delete itself (topic deletion or
  removal by a reassignment).
* ``ReplicaDeletionSuccessful`` -- deleted; it answered the deleting
  StopReplica without error.
* ``ReplicaDeletionIneligible`` -- its deletion failed: the replica is down,
  or the StopReplica that asked for deletion answered with an error.

Transitions are exactly the seed's list:
NonExistent -> New; New -> Online, Offline; Online -> Online, Offline;
Offline -> Online, Offline, DeletionStarted;
DeletionStarted -> DeletionSuccessful, DeletionIneligible;
DeletionSuccessful -> NonExistent; DeletionIneligible -> Online, Offline.
"""

from __future__ import annotations

import enum

from fsm.transition_table import TransitionTable, table


class ReplicaState(enum.Enum):
    NonExistentReplica = "NonExistentReplica"
    NewReplica = "NewReplica"
    OnlineReplica = "OnlineReplica"
    OfflineReplica = "OfflineReplica"
    ReplicaDeletionStarted = "ReplicaDeletionStarted"
    ReplicaDeletionSuccessful = "ReplicaDeletionSuccessful"
    ReplicaDeletionIneligible = "ReplicaDeletionIneligible"


_R = ReplicaState

REPLICA_TABLE: TransitionTable[ReplicaState] = table(
    "replica",
    ReplicaState,
    _R.NonExistentReplica,
    {
        _R.NonExistentReplica: [_R.NewReplica],
        _R.NewReplica: [_R.OnlineReplica, _R.OfflineReplica],
        _R.OnlineReplica: [_R.OnlineReplica, _R.OfflineReplica],
        _R.OfflineReplica: [_R.OnlineReplica, _R.OfflineReplica, _R.ReplicaDeletionStarted],
        _R.ReplicaDeletionStarted: [_R.ReplicaDeletionSuccessful, _R.ReplicaDeletionIneligible],
        _R.ReplicaDeletionSuccessful: [_R.NonExistentReplica],
        _R.ReplicaDeletionIneligible: [_R.OnlineReplica, _R.OfflineReplica],
    },
)


def replica_label(topic: str, partition: int, broker: int) -> str:
    """How a replica is named in errors and logs: ``(topic-0, broker 2)``."""
    return f"({topic}-{partition}, broker {broker})"
