"""The KRaft broker lifecycle table: seed 004's broker state machine, as a KRaft broker runs it.

The states are the seed's six ("The Broker State Machine"); their numeric values, which Kafka
exposes in metrics and on the wire (``org.apache.kafka.metadata.BrokerState``), are
``KAFKA_BROKER_STATE_VALUE``: the seed says those constants did not change.

* ``NOT_RUNNING`` -- no process (not started yet, exited, or crashed).
* ``STARTING`` -- the process runs, registers with the quorum controller (which fences it)
  and catches up with the metadata log; it heartbeats with ``WantFence`` set.
* ``RECOVERY`` -- caught up (heartbeat answer ``IsCaughtUp``); it starts the log manager and
  recovers logs if the last shutdown was unclean, then listens and heartbeats with
  ``WantFence`` unset to ask to be unfenced. Every start passes through it.
* ``RUNNING`` -- the controller unfenced it (heartbeat answer ``IsFenced`` false).
* ``PENDING_CONTROLLED_SHUTDOWN`` -- SIGTERM while RUNNING: it heartbeats ``WantShutDown`` and
  waits for ``ShouldShutDown``.
* ``SHUTTING_DOWN`` -- controlled shutdown is over, or was skipped; it stops and exits.

Unlike the ZooKeeper-mode table (``fsm.broker_states``) there is no RUNNING -> RECOVERY: a
KRaft broker has no session whose loss unregisters it. If its lease runs out the controller
fences it (``fsm.kraft.membership_states``) but the broker stays RUNNING and keeps
heartbeating until it is unfenced again; its own state does not change. A crash is modelled
as the ZooKeeper-mode table does: every live state may go straight to NOT_RUNNING (the
core's ``Crashed``; the end of a shutdown is ``Exited``: ``fsm.kraft.broker.lifecycle``).
"""

from __future__ import annotations

import enum
from types import MappingProxyType

from fsm.transition_table import TransitionTable, table


class KRaftBrokerState(enum.Enum):
    NOT_RUNNING = "NOT_RUNNING"
    STARTING = "STARTING"
    RECOVERY = "RECOVERY"
    RUNNING = "RUNNING"
    PENDING_CONTROLLED_SHUTDOWN = "PENDING_CONTROLLED_SHUTDOWN"
    SHUTTING_DOWN = "SHUTTING_DOWN"


_K = KRaftBrokerState

KAFKA_BROKER_STATE_VALUE: MappingProxyType[KRaftBrokerState, int] = MappingProxyType({
    _K.NOT_RUNNING: 0,
    _K.STARTING: 1,
    _K.RECOVERY: 2,
    _K.RUNNING: 3,
    _K.PENDING_CONTROLLED_SHUTDOWN: 6,
    _K.SHUTTING_DOWN: 7,
})
"""Kafka's ``BrokerState`` byte for each state (4 and 5 are unused; 127 is UNKNOWN)."""

KRAFT_BROKER_TABLE: TransitionTable[KRaftBrokerState] = table(
    "kraft-broker-lifecycle",
    KRaftBrokerState,
    _K.NOT_RUNNING,
    {
        _K.NOT_RUNNING: [
            _K.STARTING,  # the process starts
        ],
        _K.STARTING: [
            _K.RECOVERY,  # a heartbeat answer says it caught up with the metadata log
            _K.SHUTTING_DOWN,  # registration timed out, or SIGTERM: nothing to hand over
            _K.NOT_RUNNING,  # crash
        ],
        _K.RECOVERY: [
            _K.RUNNING,  # logs recovered, WantFence unset, and the controller unfenced it
            _K.SHUTTING_DOWN,  # SIGTERM before it was unfenced: controlled shutdown is skipped
            _K.NOT_RUNNING,  # crash
        ],
        _K.RUNNING: [
            _K.PENDING_CONTROLLED_SHUTDOWN,  # SIGTERM with controlled.shutdown.enable
            _K.SHUTTING_DOWN,  # SIGTERM with controlled shutdown off, or a fatal error
            _K.NOT_RUNNING,  # crash
        ],
        _K.PENDING_CONTROLLED_SHUTDOWN: [
            _K.SHUTTING_DOWN,  # heartbeat answer ShouldShutDown, or the shutdown wait timed out
            _K.NOT_RUNNING,  # crash
        ],
        _K.SHUTTING_DOWN: [
            _K.NOT_RUNNING,  # the process exits
        ],
    },
)
