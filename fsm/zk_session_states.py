"""The ZooKeeper client session table (seed 000, "use vanilla ZooKeeper client").

States:

* ``NOT_CONNECTED`` -- the initial state of the client.
* ``CONNECTING`` -- establishing a connection. Reached from CONNECTED on a
  connection loss: no notifications arrive, another broker may have become
  controller unseen, so the controller *pauses* its work.
* ``CONNECTED`` -- a connection and a session exist; the controller resumes.
* ``CLOSED`` -- the session closed or expired. Only the ensemble decides that a
  session expired; the controller learns it is no longer controller and
  *discards* everything pending.

Transitions are exactly the seed's list:
NOT_CONNECTED -> CONNECTING; CONNECTING -> CONNECTED, CLOSED;
CONNECTED -> CONNECTING, CLOSED.

A new session after CLOSED is a new client: it starts again at NOT_CONNECTED.
kazoo's states map onto this table in the runtime (``adapters.controller.service``:
SUSPENDED -> CONNECTING, LOST -> CLOSED, CONNECTED again -> CONNECTED); the first
connection is recorded by ``Startup`` (NOT_CONNECTED -> CONNECTING -> CONNECTED). The
controller moves its session only through this table (``fsm.controller.election``) and logs
every move as a ``StateChange`` of kind ``"session"``.
"""

from __future__ import annotations

import enum

from fsm.transition_table import TransitionTable, table


class ZkClientState(enum.Enum):
    NOT_CONNECTED = "NOT_CONNECTED"
    CONNECTING = "CONNECTING"
    CONNECTED = "CONNECTED"
    CLOSED = "CLOSED"


_Z = ZkClientState

ZK_SESSION_TABLE: TransitionTable[ZkClientState] = table(
    "zookeeper-session",
    ZkClientState,
    _Z.NOT_CONNECTED,
    {
        _Z.NOT_CONNECTED: [_Z.CONNECTING],
        _Z.CONNECTING: [_Z.CONNECTED, _Z.CLOSED],
        _Z.CONNECTED: [_Z.CONNECTING, _Z.CLOSED],
    },
)
