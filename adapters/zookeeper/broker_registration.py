"""A broker's own ZooKeeper duties (the executor of ``BrokerZkWrite`` and ``Register``).

* ``register()``: create ``/brokers/ids/<id>`` (ephemeral, Kafka's JSON through the codecs) and
  return its czxid, the broker epoch (KIP-380). A znode already there is handled as Kafka's
  ``KafkaZkClient.registerBroker`` / ``checkedEphemeralCreate`` do: owned by our current session
  -> it is ours (its czxid is the epoch); owned by a session of ours that expired (we remember
  every session id we registered with and compare the znode's ``ephemeralOwner``) -> the server
  has not removed it yet: delete it (conditionally on its version) and create again; owned by
  someone else -> wait (a watch, up to ``timeout``) for it to vanish -- another live process
  with the same broker id is a configuration error, reported as ``RegistrationError``.
* re-registration after session expiry: ``BrokerRegistrar`` listens to the kazoo session; when
  kazoo reports LOST and then CONNECTED with a new session, ``on_expired`` is called (the broker
  process hands ``BrokerSessionExpired`` to its core, whose ``Register`` effect calls
  ``register()`` again); with ``auto_reregister=True`` the registrar re-registers by itself on a
  helper thread and calls ``on_registered(epoch)``.
* ``execute(BrokerZkWrite)`` -> ``BrokerWriteResult``: each op in its own ``multi`` (conditional
  on its own version, no controller fence), pipelined; failures carry the current data and
  version (``adapters.zookeeper.writer``). Used for conditional ISR updates (``SetDataOp`` of a
  partition state with the expected version) and ``/isr_change_notification/isr_change_``
  sequential creates; ``update_isr`` and ``notify_isr_change`` are the direct forms.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterable

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError
from kazoo.protocol.states import KazooState

from adapters.zookeeper import codec
from adapters.zookeeper.writer import WriteAborted, ZkWriter
from fsm import zk_paths as P
from fsm.effects import BrokerZkWrite, CreateOp, SetDataOp
from fsm.events import BrokerWriteResult, WriteFailure
from fsm.values import Endpoint, LeaderAndIsr, TopicPartition
from fsm.znodes import BrokerRegistration, IsrChangeZnode

log = logging.getLogger("kcontrol.broker.zk")


class RegistrationError(RuntimeError):
    """``/brokers/ids/<id>`` is held by another live session (or could not be created)."""


def _setter(event: threading.Event) -> Callable[[object], None]:
    return lambda _e: event.set()


class BrokerRegistrar:
    def __init__(
        self,
        client: KazooClient,
        broker_id: int,
        endpoints: Iterable[Endpoint] = (),
        rack: str | None = None,
        *,
        on_expired: Callable[[], None] | None = None,
        auto_reregister: bool = False,
        on_registered: Callable[[int], None] | None = None,
    ) -> None:
        self.client = client
        self.broker_id = broker_id
        self.endpoints = tuple(endpoints)
        self.rack = rack
        self.writer = ZkWriter(client)
        self.epoch: int | None = None
        self.on_expired = on_expired
        self.auto_reregister = auto_reregister
        self.on_registered = on_registered
        self._sessions: set[int] = set()  # every session id we registered with
        self._lost = False
        client.add_listener(self._on_state)

    @property
    def path(self) -> str:
        return P.broker(self.broker_id)

    # ------------------------------------------------------------------ registration

    def register(self, timeout: float = 30.0) -> int:
        """Create ``/brokers/ids/<id>``; returns the broker epoch (the znode's czxid)."""
        client = self.client
        path = self.path
        deadline = time.monotonic() + timeout
        while True:
            session = client.client_id[0] if client.client_id else None
            reg = BrokerRegistration(self.broker_id, self.endpoints, self.rack,
                                     int(time.time() * 1000))
            try:
                _, stat = client.create(path, codec.encode(path, reg), ephemeral=True,
                                        makepath=True, include_data=True)
                if session is not None:
                    self._sessions.add(session)
                self.epoch = stat.czxid
                log.info("broker %d registered at %s with epoch %d", self.broker_id, path,
                         stat.czxid)
                return stat.czxid
            except NodeExistsError:
                pass
            stat = client.exists(path)
            if stat is None:
                continue
            owner = stat.ephemeralOwner
            if owner == session:
                self._sessions.add(owner)
                self.epoch = stat.czxid
                return stat.czxid
            if owner in self._sessions:
                log.info("broker %d: deleting %s left by our expired session 0x%x",
                         self.broker_id, path, owner)
                with contextlib.suppress(NoNodeError, BadVersionError):
                    client.delete(path, version=stat.version)
                continue
            left = deadline - time.monotonic()
            if left <= 0:
                raise RegistrationError(
                    f"{path} is held by session 0x{owner:x}, not ours: another broker with id "
                    f"{self.broker_id} is running, or a previous incarnation's session has not "
                    f"expired yet")
            gone = threading.Event()
            if client.exists(path, watch=_setter(gone)) is not None:
                gone.wait(min(left, 1.0))

    def _on_state(self, state: str) -> None:
        if state == KazooState.LOST:
            self._lost = True
        elif state == KazooState.CONNECTED and self._lost:
            self._lost = False
            self.epoch = None
            if self.on_expired is not None:
                self.on_expired()
            if self.auto_reregister:
                threading.Thread(target=self._reregister, daemon=True,
                                 name=f"kcontrol-broker-{self.broker_id}-register").start()

    def _reregister(self) -> None:
        try:
            epoch = self.register()
        except Exception:  # noqa: BLE001 -- a helper thread: report, never die loudly
            log.exception("broker %d: re-registration failed", self.broker_id)
            return
        if self.on_registered is not None:
            self.on_registered(epoch)

    def unregister(self) -> None:
        """Delete our znode (a clean shutdown closes the session, which does the same)."""
        try:
            stat = self.client.exists(self.path)
            if stat is not None and stat.ephemeralOwner == self.client.client_id[0]:
                self.client.delete(self.path, version=stat.version)
        except (NoNodeError, BadVersionError):
            pass

    # ------------------------------------------------------------------ writes

    def execute(self, write: BrokerZkWrite) -> BrokerWriteResult:
        """A broker core's ``BrokerZkWrite``; a connection loss fails every op (``NoNode`` is
        not claimed: code ``ConnectionLoss``, current unknown) -- the core retries later."""
        try:
            failures, _ = self.writer.execute_unfenced_ops(write.ops)
        except WriteAborted as exc:
            log.warning("broker %d: write #%d aborted: %s", self.broker_id, write.token, exc)
            failures = [WriteFailure(op.path, "ConnectionLoss") for op in write.ops]
        return BrokerWriteResult(write.token, tuple(failures))

    def update_isr(self, tp: TopicPartition, leader_and_isr: LeaderAndIsr,
                   expected_version: int) -> tuple[bool, int, LeaderAndIsr | None]:
        """Conditional partition state update by its leader: ``(ok, version, current)`` --
        the new version on success; the znode's version and data on BadVersion."""
        path = P.partition_state(*tp)
        failures, _ = self.writer.execute_unfenced_ops(
            [SetDataOp(path, leader_and_isr, expected_version)])
        if not failures:
            return True, expected_version + 1, leader_and_isr
        f = failures[0]
        current = f.current if isinstance(f.current, LeaderAndIsr) else None
        return False, f.current_version, current

    def notify_isr_change(self, tps: Iterable[TopicPartition]) -> str:
        """Create ``/isr_change_notification/isr_change_<seq>``; returns the path created."""
        prefix = P.isr_change(P.ISR_CHANGE_PREFIX)
        op = CreateOp(prefix, IsrChangeZnode(tuple(sorted(tps))), sequential=True)
        failures, created = self.writer.execute_unfenced_ops([op])
        if failures:
            raise RegistrationError(f"cannot create {prefix}: {failures[0].code}")
        return created[0]
