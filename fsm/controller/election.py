"""Controller election and the controller's own ZooKeeper session (contract "Election").

``Startup`` only marks the candidate started: it carries no epoch, so it never elects
(a guess would be a write decided on values nobody read). The adapter reads ``/controller``
(with a watch) and ``/controller_epoch`` right after it and hands over a
``ControllerChange``. ``ControllerChange(active=None)`` -> one ``ZkWrite``: create
ephemeral ``/controller`` and set ``/controller_epoch`` to epoch+1 conditional on the
version just read. Success: epoch+1,
fence version +1, ``BecameController`` and ``LoadCluster``. Failure: wait for the next
``ControllerChange``. Another broker named in ``/controller`` while active -> resign.
Session: CONNECTING pauses, CONNECTED resumes, CLOSED resigns (discarding everything).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fsm import zk_paths
from fsm.controller.records import Round
from fsm.effects import BecameController, CreateOp, LoadCluster, SetDataOp, ZkWrite
from fsm.events import ControllerChange, SessionStateChange, Startup, WriteResult
from fsm.transition_table import IllegalTransition
from fsm.zk_session_states import ZK_SESSION_TABLE, ZkClientState
from fsm.znodes import ControllerEpochZnode, ControllerZnode

if TYPE_CHECKING:
    from fsm.controller.controller import Controller


_Z = ZkClientState
_SESSION_REASONS = {
    _Z.CONNECTING: "connection to ZooKeeper lost: paused until CONNECTED",
    _Z.CONNECTED: "reconnected with the same session: resumed",
    _Z.CLOSED: "ZooKeeper session expired or closed: everything discarded",
}


class ElectionMixin:
    def _move_session(self: Controller, target: ZkClientState, reason: str) -> bool:
        """The one place the session changes state: checked against ZK_SESSION_TABLE; an
        out-of-table move is logged as illegal and changes nothing."""
        cur = self._session
        if not ZK_SESSION_TABLE.is_valid(cur, target):
            try:
                ZK_SESSION_TABLE.check(f"controller {self.config.broker_id}'s session", cur,
                                       target)
            except IllegalTransition as e:
                self._log("illegal", None, cur.value, target.value, f"{e} ({reason})")
            return False
        self._session = target
        self._log("session", None, cur, target, reason)
        return True

    def _on_startup(self: Controller, ev: Startup) -> None:
        cur = self._session
        if cur is _Z.CLOSED:
            self._session = _Z.NOT_CONNECTED
            self._log("info", None, cur.value, _Z.NOT_CONNECTED.value,
                      "a new session after CLOSED is a new client")
        elif cur is not _Z.NOT_CONNECTED:
            self._log("illegal", None, cur.value, _Z.CONNECTING.value,
                      f"Startup (a new client's first connection) while the session is "
                      f"{cur.value}: ignored")
            return
        self._move_session(_Z.CONNECTING, "new client: connecting")
        self._move_session(_Z.CONNECTED, "new client: session established (Startup)")
        # No election here: the read of /controller and /controller_epoch that follows
        # (ControllerChange) decides it with real values.
        self._log("info", None, "", "candidate", "started: awaiting the read of /controller")

    def _on_controller_change(self: Controller, ev: ControllerChange) -> None:
        self._seen = (ev.epoch, ev.epoch_version)
        if ev.active is None:
            if self._active:
                self._resign("/controller was deleted")
            self._try_elect()
        elif self._active and ev.active != self.config.broker_id:
            self._resign(f"broker {ev.active} is controller now (epoch {ev.epoch})")

    def _try_elect(self: Controller) -> None:
        epoch, version = self._seen
        token = self._next_token()
        self._pending = Round(token, "election", election=(epoch, version))
        self._write = ZkWrite(token, (
            CreateOp(zk_paths.CONTROLLER, ControllerZnode(self.config.broker_id), ephemeral=True),
            SetDataOp(zk_paths.CONTROLLER_EPOCH, ControllerEpochZnode(epoch + 1), version),
        ), None)

    def _on_election_result(self: Controller, r: Round, ev: WriteResult) -> None:
        epoch, version = r.election
        if ev.fenced or ev.failures:
            codes = ",".join(f.code for f in ev.failures) or "fenced"
            self._log("info", None, "candidate", "candidate", f"lost election ({codes})")
            return
        self._active = True
        self._loaded = False
        self._epoch = epoch + 1
        self._fence_version = version + 1
        self._seen = (epoch + 1, version + 1)
        self._log("info", None, "candidate", "active", f"elected with epoch {epoch + 1}")
        self._effects.append(BecameController(epoch + 1))
        self._effects.append(LoadCluster())

    def _on_session_state_change(self: Controller, ev: SessionStateChange) -> None:
        target = ev.state
        if not isinstance(target, ZkClientState):
            self._reject(None, f"SessionStateChange to {target!r}: not a ZkClientState")
            return
        if not self._move_session(target, _SESSION_REASONS.get(target, "")):
            return
        if target is _Z.CLOSED and self._active:
            self._resign("ZooKeeper session closed")
