"""The seven transition tables, in one place for the tools that walk them.

* ``ZK_TABLES`` -- the four ZooKeeper-mode tables (partition, replica, ZooKeeper session,
  broker session): the ones the ZooKeeper-mode cores run and the model checker's coverage
  counts (``model_check.coverage``).
* ``KRAFT_TABLES`` -- the two KRaft-mode tables (seed 004): broker membership as the quorum
  controller sees it, and the KRaft broker's lifecycle. Nothing in the ZooKeeper world takes
  them, so they stay out of that coverage.
* ``RAFT_TABLES`` -- the metadata quorum's Raft roles (KIP-595), which every controller and
  broker of a KRaft cluster takes; the Raft checker's coverage counts it.
* ``ALL_TABLES`` -- all of them, for the diagrams and the tables' own tests.
"""

from __future__ import annotations

from fsm.broker_states import BROKER_TABLE
from fsm.kraft.broker_lifecycle_states import KRAFT_BROKER_TABLE
from fsm.kraft.membership_states import MEMBERSHIP_TABLE
from fsm.partition_states import PARTITION_TABLE
from fsm.raft.roles import RAFT_ROLE_TABLE
from fsm.replica_states import REPLICA_TABLE
from fsm.transition_table import TransitionTable
from fsm.zk_session_states import ZK_SESSION_TABLE

ZK_TABLES: dict[str, TransitionTable] = {
    t.name: t for t in (PARTITION_TABLE, REPLICA_TABLE, ZK_SESSION_TABLE, BROKER_TABLE)
}
KRAFT_TABLES: dict[str, TransitionTable] = {
    t.name: t for t in (MEMBERSHIP_TABLE, KRAFT_BROKER_TABLE)
}
RAFT_TABLES: dict[str, TransitionTable] = {t.name: t for t in (RAFT_ROLE_TABLE,)}
ALL_TABLES: dict[str, TransitionTable] = {**ZK_TABLES, **KRAFT_TABLES, **RAFT_TABLES}
