"""The broker session table: seed 004's broker lifecycle, as it applies in ZooKeeper mode.

Seed 004 ("The Broker State Machine") names six states. Without a quorum
controller there is no fencing by heartbeat: a broker is in the cluster when
its ephemeral ``/brokers/ids/<id>`` znode exists, and that znode's czxid is its
*broker epoch*, new on every registration. So in kcontrol:

* ``NOT_RUNNING`` -- no process, or a process that has crashed. No znode, no epoch.
* ``STARTING`` -- the process runs and has a ZooKeeper session; it reads the
  cluster's metadata (topics, assignments, partition states) from ZooKeeper.
* ``RECOVERY`` -- startup recovery (seed 001 section E): start the replicas
  assigned to this broker, become leader or follower as ZooKeeper says, delete
  local replicas no longer assigned. It then registers ``/brokers/ids/<id>``.
* ``RUNNING`` -- registered, with a broker epoch; it takes controller requests
  stamped with that epoch and serves clients.
* ``PENDING_CONTROLLED_SHUTDOWN`` -- it got SIGTERM and asked the controller
  (ControlledShutdown, stamped with its epoch) to move leaderships off it; it
  waits for the answer or for its retries to run out.
* ``SHUTTING_DOWN`` -- controlled shutdown is over (or was not needed); it
  closes its session, which deletes its znode, and exits.

Transitions we choose, and why:

* NOT_RUNNING -> STARTING: the process starts.
* STARTING -> RECOVERY: the metadata is read.
* RECOVERY -> RUNNING: the broker registered; the czxid is its new epoch.
* RUNNING -> PENDING_CONTROLLED_SHUTDOWN: SIGTERM with controlled shutdown on.
* PENDING_CONTROLLED_SHUTDOWN -> SHUTTING_DOWN: the controller answered, or
  the retries ran out (Kafka shuts down anyway).
* RUNNING -> SHUTTING_DOWN: SIGTERM with controlled shutdown off.
* STARTING, RECOVERY -> SHUTTING_DOWN: SIGTERM before registering: nothing to
  hand over.
* RUNNING, PENDING_CONTROLLED_SHUTDOWN -> RECOVERY: the broker's ZooKeeper
  session expired, so its znode is gone and the controller treats it as dead.
  It keeps its process and logs, reads the state again and re-registers with a
  *new* epoch (Kafka re-registers on a new session). A pending controlled
  shutdown is abandoned: the old epoch's answer must not be trusted.
* SHUTTING_DOWN -> NOT_RUNNING: the process exits.
* every state but NOT_RUNNING -> NOT_RUNNING: a crash (kill -9, power loss)
  can happen anywhere.

Seed 004 has RECOVERY before STARTING's successor asks to be unfenced; in
ZooKeeper mode "unfenced" is "registered", which is why RECOVERY -> RUNNING is
the registration.
"""

from __future__ import annotations

import enum

from fsm.transition_table import TransitionTable, table


class BrokerState(enum.Enum):
    NOT_RUNNING = "NOT_RUNNING"
    STARTING = "STARTING"
    RECOVERY = "RECOVERY"
    RUNNING = "RUNNING"
    PENDING_CONTROLLED_SHUTDOWN = "PENDING_CONTROLLED_SHUTDOWN"
    SHUTTING_DOWN = "SHUTTING_DOWN"


_B = BrokerState

BROKER_TABLE: TransitionTable[BrokerState] = table(
    "broker-session",
    BrokerState,
    _B.NOT_RUNNING,
    {
        _B.NOT_RUNNING: [_B.STARTING],
        _B.STARTING: [_B.RECOVERY, _B.SHUTTING_DOWN, _B.NOT_RUNNING],
        _B.RECOVERY: [_B.RUNNING, _B.SHUTTING_DOWN, _B.NOT_RUNNING],
        _B.RUNNING: [
            _B.PENDING_CONTROLLED_SHUTDOWN,
            _B.SHUTTING_DOWN,
            _B.RECOVERY,
            _B.NOT_RUNNING,
        ],
        _B.PENDING_CONTROLLED_SHUTDOWN: [_B.SHUTTING_DOWN, _B.RECOVERY, _B.NOT_RUNNING],
        _B.SHUTTING_DOWN: [_B.NOT_RUNNING],
    },
)


def broker_label(broker_id: int) -> str:
    return f"broker {broker_id}"
