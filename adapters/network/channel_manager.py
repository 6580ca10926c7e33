"""``ControllerChannelManager``: the controller's connections to the brokers (seed 003),
implementing ``adapters.network.broker_channels.BrokerChannels``.

One ``_BrokerChannel`` per broker (Kafka's ControllerBrokerStateInfo + RequestSendThread):
a bounded queue and one sender thread, so **at most one request is in flight per broker**
and a slow broker holds up only its own channel. The sender:

1. takes the next request (stamped by the controller with its epoch and the target broker's
   epoch; the manager does not restamp);
2. connects to the broker's control-plane endpoint -- the endpoint named
   ``control_plane_listener`` (e.g. CONTROLLER), else ``fallback_listener`` (PLAINTEXT),
   else the first one -- and sends it: LeaderAndIsr v2, StopReplica v1, UpdateMetadata v5;
3. on any failure (refused, reset, timeout, an answer that does not decode) it closes the
   connection, waits a bounded exponential back-off (``Backoff``: 50 ms doubling to 1 s,
   +-20 % jitter, Kafka's reconnect.backoff defaults) and **sends the same request again**,
   until it is answered or the broker is removed (Kafka's ``doWork`` loop);
4. delivers the answer as ``BrokerResponseReceived(broker_id, <epoch the request carried>,
   api, response, delete_partitions=<StopReplica's flag, else None>)``.

``remove_broker`` drops the broker's queue and closes its connection (an answer still in
flight is discarded); ``reset`` (the controller resigned) does so for every broker and
answers pending ControlledShutdowns NOT_CONTROLLER. ``send`` to a broker the manager has
never been told about (``brokers``) is dropped with a warning, as Kafka does for an offline
broker. A full queue makes ``send`` wait up to ``enqueue_timeout_s`` (back-pressure on the
event thread), then drop with an error log; the default capacity (10,000 requests) is far
above what the controller batches.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import random
import threading
from dataclasses import dataclass
from typing import Any

from adapters.host.thread_priority import raise_priority
from adapters.network.broker_channels import Deliver
from adapters.network.client import WireClient
from adapters.network.codec import ApiKey, CodecError
from adapters.network.codec import convert as C
from adapters.network.controlled_shutdown import ControlledShutdownRouter
from adapters.network.shared_encoding import SharedEncodings
from fsm.errors import ErrorCode
from fsm.events import BrokerResponseReceived
from fsm.requests import (
    ControlledShutdownResponse,
    ControllerRequest,
    LeaderAndIsrRequest,
    StopReplicaRequest,
    UpdateMetadataRequest,
)
from fsm.values import BrokerInfo, Endpoint

log = logging.getLogger("kcontrol.controller.channels")

_STOP = object()


@dataclass(frozen=True, slots=True)
class Backoff:
    initial_s: float = 0.05
    max_s: float = 1.0
    multiplier: float = 2.0
    jitter: float = 0.2

    def delay(self, attempt: int) -> float:
        """Seconds to wait before attempt ``attempt`` (1 = the first retry)."""
        base = min(self.max_s, self.initial_s * self.multiplier ** max(attempt - 1, 0))
        return base * (1 + random.uniform(-self.jitter, self.jitter))


def encode(request: ControllerRequest, inter_broker_listener: str,
           shared: SharedEncodings | None = None) -> tuple[int, int, Any]:
    """(api key, version, wire body) of a controller request. With ``shared``, the partition
    states of a large LeaderAndIsr or UpdateMetadata are encoded once for every broker that
    gets the same ones (``shared_encoding``)."""
    if isinstance(request, LeaderAndIsrRequest):
        states = (None if shared is None else shared.topic_states(
            ApiKey.LEADER_AND_ISR, 2, request.partitions, C.leader_and_isr_topic_states))
        try:
            body = C.leader_and_isr_request_to_wire(request, inter_broker_listener, states)
        except CodecError:  # a live leader without that listener: its first endpoint
            body = C.leader_and_isr_request_to_wire(request, None, states)
        return ApiKey.LEADER_AND_ISR, 2, body
    if isinstance(request, StopReplicaRequest):
        return ApiKey.STOP_REPLICA, 1, C.stop_replica_request_to_wire(request)
    if isinstance(request, UpdateMetadataRequest):
        states = (None if shared is None else shared.topic_states(
            ApiKey.UPDATE_METADATA, 5, request.partitions, C.update_metadata_topic_states))
        return ApiKey.UPDATE_METADATA, 5, C.update_metadata_request_to_wire(request, states)
    raise TypeError(f"not a controller request: {request!r}")


def select_endpoint(info: BrokerInfo, listener: str | None, fallback: str) -> Endpoint | None:
    for name in (listener, fallback):
        ep = next((e for e in info.endpoints if name is not None and e.listener == name), None)
        if ep is not None:
            return ep
    return info.endpoints[0] if info.endpoints else None


class ControllerChannelManager:
    def __init__(self, controller_id: int, *, control_plane_listener: str | None = "CONTROLLER",
                 fallback_listener: str = "PLAINTEXT", inter_broker_listener: str = "PLAINTEXT",
                 queue_capacity: int = 10_000, enqueue_timeout_s: float = 5.0,
                 request_timeout_s: float = 30.0, connect_timeout_s: float = 5.0,
                 backoff: Backoff | None = None,
                 router: ControlledShutdownRouter | None = None) -> None:
        self.controller_id = controller_id
        self.control_plane_listener = control_plane_listener
        self.fallback_listener = fallback_listener
        self.inter_broker_listener = inter_broker_listener
        self.queue_capacity = queue_capacity
        self.enqueue_timeout_s = enqueue_timeout_s
        self.request_timeout_s = request_timeout_s
        self.connect_timeout_s = connect_timeout_s
        self.backoff = backoff or Backoff()
        self.shared = SharedEncodings()
        self.router = router
        self.dropped = 0
        self._deliver: Deliver | None = None
        self._lock = threading.Lock()
        self._known: dict[int, BrokerInfo] = {}
        self._channels: dict[int, _BrokerChannel] = {}
        self._retired: list[_BrokerChannel] = []

    # ------------------------------------------------------------------ BrokerChannels

    def start(self, deliver: Deliver) -> None:
        self._deliver = deliver

    def brokers(self, live: tuple[BrokerInfo, ...]) -> None:
        with self._lock:
            for info in live:
                self._known[info.broker_id] = info
                ch = self._channels.get(info.broker_id)
                if ch is not None:
                    ch.update(info)
                elif self._deliver is not None:
                    self._add(info)

    def send(self, broker_id: int, request: ControllerRequest) -> None:
        with self._lock:
            ch = self._channels.get(broker_id)
            if ch is None:
                info = self._known.get(broker_id)
                if info is None or self._deliver is None:
                    log.warning("not sending %s to broker %d: unknown broker",
                                getattr(request, "api", request), broker_id)
                    self.dropped += 1
                    return
                ch = self._add(info)
        if not ch.enqueue(request, self.enqueue_timeout_s):
            self.dropped += 1
            log.error("broker %d: request queue full (%d) for %.1f s: %s dropped", broker_id,
                      self.queue_capacity, self.enqueue_timeout_s, request.api)

    def reply_controlled_shutdown(self, broker_id: int, correlation: int,
                                  response: ControlledShutdownResponse) -> None:
        if self.router is None or not self.router.reply(broker_id, correlation, response):
            log.info("ControlledShutdown answer for broker %d not routed", broker_id)

    def remove_broker(self, broker_id: int) -> None:
        with self._lock:
            ch = self._channels.pop(broker_id, None)
            self._known.pop(broker_id, None)
        if ch is not None:
            ch.stop()
            self._retire(ch)
            log.info("removed the channel to broker %d", broker_id)

    def reset(self) -> None:
        with self._lock:
            chans, self._channels = list(self._channels.values()), {}
        for ch in chans:
            ch.stop()
            self._retire(ch)
        if self.router is not None:
            self.router.fail_all(ErrorCode.NOT_CONTROLLER)

    def close(self, timeout: float = 5.0) -> None:
        self.reset()
        with self._lock:
            retired, self._retired = self._retired, []
        for ch in retired:
            ch.join(timeout)

    # ------------------------------------------------------------------ queries

    def queue_size(self, broker_id: int) -> int:
        ch = self._channels.get(broker_id)
        return 0 if ch is None else ch.queue.qsize()

    def in_flight(self, broker_id: int) -> ControllerRequest | None:
        ch = self._channels.get(broker_id)
        return None if ch is None else ch.in_flight

    def channel_ids(self) -> list[int]:
        with self._lock:
            return sorted(self._channels)

    def metrics(self) -> dict[str, float]:
        """Per broker: ``broker_<id>_queue_size``, ``_in_flight``, ``_sent_total``,
        ``_reconnects_total``; and ``dropped_total``."""
        out: dict[str, float] = {"dropped_total": float(self.dropped)}
        with self._lock:
            chans = list(self._channels.items())
        for bid, ch in chans:
            out[f"broker_{bid}_queue_size"] = float(ch.queue.qsize())
            out[f"broker_{bid}_in_flight"] = float(ch.in_flight is not None)
            out[f"broker_{bid}_sent_total"] = float(ch.answered)
            out[f"broker_{bid}_reconnects_total"] = float(ch.reconnects)
        return out

    # ------------------------------------------------------------------ internals

    def _add(self, info: BrokerInfo) -> _BrokerChannel:
        ch = _BrokerChannel(self, info)
        self._channels[info.broker_id] = ch
        ch.start()
        return ch

    def _retire(self, ch: _BrokerChannel) -> None:
        with self._lock:
            self._retired = [c for c in self._retired if c.alive] + [ch]

    def _delivered(self, ch: _BrokerChannel, request: ControllerRequest, body: Any) -> None:
        deliver = self._deliver
        if deliver is None or ch.stopped.is_set():
            return
        response = C.controller_response_from_wire(request.api, body)
        delete = request.delete_partitions if isinstance(request, StopReplicaRequest) else None
        deliver(BrokerResponseReceived(ch.broker_id, request.broker_epoch, request.api,
                                       response, delete_partitions=delete))


class _BrokerChannel:
    """One broker's queue and sender thread (Kafka's RequestSendThread)."""

    def __init__(self, manager: ControllerChannelManager, info: BrokerInfo) -> None:
        self.manager = manager
        self.broker_id = info.broker_id
        self.info = info
        self.queue: queue.Queue[Any] = queue.Queue(maxsize=manager.queue_capacity)
        self.stopped = threading.Event()
        self.in_flight: ControllerRequest | None = None
        self.answered = 0
        self.reconnects = 0
        self._client: WireClient | None = None
        self._lock = threading.Lock()
        self._thread = threading.Thread(
            target=self._run, daemon=True,
            name=f"kcontrol-controller-{manager.controller_id}-to-broker-{info.broker_id}")

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def start(self) -> None:
        self._thread.start()

    def join(self, timeout: float) -> None:
        if self._thread.ident is not None:
            self._thread.join(timeout)

    def update(self, info: BrokerInfo) -> None:
        m = self.manager
        with self._lock:
            old = select_endpoint(self.info, m.control_plane_listener, m.fallback_listener)
            self.info = info
            new = select_endpoint(info, m.control_plane_listener, m.fallback_listener)
            client = self._client if old != new else None
        if client is not None:
            client.abort()  # reconnect to the new endpoint (the request is resent)

    def enqueue(self, request: ControllerRequest, timeout: float) -> bool:
        try:
            self.queue.put(request, timeout=timeout)
            return True
        except queue.Full:
            return False

    def stop(self) -> None:
        self.stopped.set()
        while True:
            try:
                self.queue.get_nowait()
            except queue.Empty:
                break
        with contextlib.suppress(queue.Full):
            self.queue.put_nowait(_STOP)
        with self._lock:
            client = self._client
        if client is not None:
            client.abort()

    def _run(self) -> None:
        raise_priority(f"the controller's sender to broker {self.broker_id}")
        while not self.stopped.is_set():
            request = self.queue.get()
            if request is _STOP or self.stopped.is_set():
                break
            self.in_flight = request
            try:
                body = self._send_until_answered(request)
                if body is not None:
                    self.answered += 1
                    self.manager._delivered(self, request, body)
            except Exception:  # noqa: BLE001 -- the sender never dies on one request
                log.exception("broker %d: %s failed", self.broker_id, request.api)
            finally:
                self.in_flight = None
        self._disconnect()

    def _send_until_answered(self, request: ControllerRequest) -> Any:
        m = self.manager
        try:
            api_key, version, body = encode(request, m.inter_broker_listener, m.shared)
        except (CodecError, TypeError) as exc:
            log.error("broker %d: cannot encode %s: %s; dropped", self.broker_id,
                      getattr(request, "api", request), exc)
            return None
        attempt = 0
        while not self.stopped.is_set():
            try:
                return self._connect().request(api_key, version, body)
            except (OSError, CodecError) as exc:
                attempt += 1
                self.reconnects += 1
                self._disconnect()
                delay = m.backoff.delay(attempt)
                log.warning("controller %d -> broker %d: %s failed (%s: %s); reconnecting "
                            "in %.0f ms", m.controller_id, self.broker_id, request.api,
                            type(exc).__name__, exc, delay * 1000)
                if self.stopped.wait(delay):
                    break
        return None

    def _connect(self) -> WireClient:
        m = self.manager
        with self._lock:
            if self._client is not None:
                return self._client
            ep = select_endpoint(self.info, m.control_plane_listener, m.fallback_listener)
            if ep is None:
                raise ConnectionError(f"broker {self.broker_id} has no endpoint")
            client = WireClient(ep.host, ep.port, client_id=f"controller-{m.controller_id}",
                                timeout=m.request_timeout_s, connect_timeout=m.connect_timeout_s)
            self._client = client
        try:
            return client.connect()
        except OSError:
            with self._lock:
                if self._client is client:
                    self._client = None
            raise

    def _disconnect(self) -> None:
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()
