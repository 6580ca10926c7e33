"""The partition table (seed 000, "PartitionStateMachine").

States:

* ``NonExistentPartition`` -- the partition either never existed or was
  created and then deleted.
* ``NewPartition`` -- the partition has been created: it has a replica set,
  but its leader and ISR are not decided yet.
* ``OnlinePartition`` -- the partition has a leader. Moving *to* this state
  decides leader and ISR, writes them to ZooKeeper and updates the cluster's
  metadata (the seed's one state change with side effects).
* ``OfflinePartition`` -- the partition's leader has died.

Transitions are exactly the seed's list:
NonExistent -> New; New -> Online, Offline; Online -> Online, Offline;
Offline -> Online, Offline, NonExistent.
"""

from __future__ import annotations

import enum

from fsm.transition_table import TransitionTable, table


class PartitionState(enum.Enum):
    NonExistentPartition = "NonExistentPartition"
    NewPartition = "NewPartition"
    OnlinePartition = "OnlinePartition"
    OfflinePartition = "OfflinePartition"


_P = PartitionState

PARTITION_TABLE: TransitionTable[PartitionState] = table(
    "partition",
    PartitionState,
    _P.NonExistentPartition,
    {
        _P.NonExistentPartition: [_P.NewPartition],
        _P.NewPartition: [_P.OnlinePartition, _P.OfflinePartition],
        _P.OnlinePartition: [_P.OnlinePartition, _P.OfflinePartition],
        _P.OfflinePartition: [_P.OnlinePartition, _P.OfflinePartition, _P.NonExistentPartition],
    },
)


def partition_label(topic: str, partition: int) -> str:
    """How a partition is named in errors and logs: ``topic-0``."""
    return f"{topic}-{partition}"
