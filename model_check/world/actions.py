"""The world's actions: small frozen values, one per choice the scheduler can make.

``Action(kind, broker, arg)``: ``broker`` is the actor (the broker process the
action happens at), ``arg`` a small immutable detail (a channel key, a path, a
timer, an admin op index, an ISR). ``describe()`` is one line.
"""

from __future__ import annotations

from typing import NamedTuple

# progress: what happens anyway in a fault-free run
COMMIT = "commit"  # commit controller ``broker``'s pending ZkWrite
PROCESS = "process"  # controller ``broker`` handles its next queued event
NOTIFY = "notify"  # deliver the next watch notification of a session of ``broker``
DELIVER = "deliver"  # deliver the next message of channel ``arg``
SESSION_LOST = "session-lost"  # broker ``broker`` learns its session expired (after a pause)
RECONNECT = "zk-reconnect"  # ``arg`` = CONTROLLER_SESSION|BROKER_SESSION of ``broker``
# reconnects its (still alive) session after ZK_DISCONNECT
BROKER_IO = "broker-io"  # broker ``broker`` does its deferred ZooKeeper read or registration
START = "start"  # first start of a broker process
TIMER = "timer"  # fire timer ``arg`` = (role, kind) of ``broker``
# faults (budgeted)
CRASH = "crash"
RESTART = "restart"
EXPIRE_BROKER = "expire-broker"  # the broker's session expires (its core learns it later)
EXPIRE_CONTROLLER = "expire-controller"  # the controller candidate's session expires
DROP = "drop"  # drop the connection between ``broker`` and ``arg``
ZK_DISCONNECT = "zk-disconnect"  # the ZooKeeper connection of session ``arg`` of ``broker``
# is lost (CONTROLLER_SESSION or BROKER_SESSION); the session lives on: RECONNECT, or
# expiry (EXPIRE_CONTROLLER / EXPIRE_BROKER, then free of their budget)
ISR_CHANGE = "isr-change"  # leader ``broker`` wants ``arg`` = (tp, isr)
ADMIN = "admin"  # admin op number ``arg`` of the config

ORDER = (COMMIT, PROCESS, NOTIFY, DELIVER, SESSION_LOST, RECONNECT, BROKER_IO, START, TIMER,
         ISR_CHANGE, ADMIN, CRASH, RESTART, EXPIRE_BROKER, EXPIRE_CONTROLLER, DROP,
         ZK_DISCONNECT)
PROGRESS = frozenset({COMMIT, PROCESS, NOTIFY, DELIVER, SESSION_LOST, RECONNECT, BROKER_IO})
FAULTS = frozenset({CRASH, RESTART, EXPIRE_BROKER, EXPIRE_CONTROLLER, DROP, ISR_CHANGE,
                    ZK_DISCONNECT})
"""The budgeted faults (``World.apply`` spends their budget; an expiry of a session whose
connection is lost spends nothing: it is the other outcome of that ZK_DISCONNECT)."""

CONTROLLER_SESSION = "controller"
BROKER_SESSION = "broker"
APPLIED = "applied"
"""``Action(COMMIT, b, APPLIED)``: while the controller's connection is lost, its write was
in flight at the drop and the ensemble applied it; the answer is lost (reported fenced).
``Action(COMMIT, b)`` then is the write that never reached the ensemble (fenced too)."""


class Action(NamedTuple):
    kind: str
    broker: int
    arg: object = None

    def describe(self) -> str:
        a = self.arg
        if self.kind == DELIVER:
            return f"deliver {a.describe()}"  # type: ignore[union-attr]
        if self.kind == NOTIFY:
            return f"notify b{self.broker} {a}"
        if self.kind == TIMER:
            role, kind = a  # type: ignore[misc]
            return f"timer {role}{self.broker} {kind.value}"
        if self.kind == DROP:
            return f"drop {self.broker}<->{a}"
        if self.kind == ISR_CHANGE:
            (t, p), isr = a  # type: ignore[misc]
            return f"isr-change b{self.broker} {t}-{p} isr={','.join(map(str, isr))}"
        if self.kind == ADMIN:
            return f"admin #{a}"
        if self.kind in (ZK_DISCONNECT, RECONNECT):
            return f"{self.kind} {a} {self.broker}"
        if self.kind == COMMIT and a == APPLIED:
            return f"commit {self.broker} (applied, answer lost)"
        return f"{self.kind} {self.broker}"
