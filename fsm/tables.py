"""The four transition tables, in one place for the tools that walk all of them."""

from __future__ import annotations

from fsm.broker_states import BROKER_TABLE
from fsm.partition_states import PARTITION_TABLE
from fsm.replica_states import REPLICA_TABLE
from fsm.transition_table import TransitionTable
from fsm.zk_session_states import ZK_SESSION_TABLE

ALL_TABLES: dict[str, TransitionTable] = {
    t.name: t for t in (PARTITION_TABLE, REPLICA_TABLE, ZK_SESSION_TABLE, BROKER_TABLE)
}
