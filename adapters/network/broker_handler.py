"""``BrokerRequestHandler``: a ``BrokerCore`` (``fsm.broker``) on the wire.

- LeaderAndIsr v2 / StopReplica v1 / UpdateMetadata v5: wire dict -> ``fsm.requests``
  value (``codec.convert``) -> ``core.handle(RequestReceived(request, n))`` -> the
  ``Respond`` effect for ``n`` -> wire response. Other effects the core returns are handed
  to ``on_effects`` (the broker process executes them), after the lock is released;
- ApiVersions v0-v3: ``advertised`` (``server.advertised_apis(config)``: what the data
  plane accepts); unsupported versions never get here (the listener answers the fallback);
- Metadata v0-v8 from the core's metadata cache, answered already encoded (``bytes``) from
  ``metadata_answers`` (built once per change of the cache, not per request): the live brokers with their
  ``client_listener`` endpoint (a broker without one is left out, as Kafka does), the
  controller id (-1 when unknown), the requested topics (none requested = all at v0, null
  at v1+; an empty list at v1+ = no topics) with leader, leader epoch, replicas, ISR and
  offline replicas; a topic the cache lacks is UNKNOWN_TOPIC_OR_PARTITION; a partition
  whose leader is not a live broker with that listener is LEADER_NOT_AVAILABLE, leader -1;
- ControlledShutdown v0-v2: through the ``ControlledShutdownRouter`` to this broker's
  controller service (NOT_CONTROLLER without one); the handler thread waits (bounded).

**Thread safety.** ``BrokerCore`` is not thread-safe. Every call into it -- ``handle`` and
the queries -- is made holding ``lock``; the broker process passes the same lock and takes
it for its own lifecycle events (``BrokerStarted``, ``BrokerRegistered``, timers...). Core
calls are short (no I/O), so handler threads contend only briefly; ControlledShutdown
waits outside the lock.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

from adapters.network.codec import SUPPORTED, ApiKey, RequestHeader, api_versions_body
from adapters.network.codec import convert as C
from adapters.network.codec.apis.metadata import requested_topics
from adapters.network.controlled_shutdown import ControlledShutdownRouter
from adapters.network.metadata_answers import MetadataAnswers
from fsm.broker import BrokerCore, MetadataView, TopicMetadata
from fsm.effects import Respond
from fsm.errors import ErrorCode
from fsm.events import RequestReceived
from fsm.requests import ControlledShutdownResponse, ControllerResponse

log = logging.getLogger("kcontrol.network")

Wire = dict[str, Any]
_FROM_WIRE: dict[int, Callable[..., Any]] = {
    ApiKey.LEADER_AND_ISR: C.leader_and_isr_request_from_wire,
    ApiKey.STOP_REPLICA: C.stop_replica_request_from_wire,
    ApiKey.UPDATE_METADATA: C.update_metadata_request_from_wire,
}
_API_NAMES = {ApiKey.LEADER_AND_ISR: "LeaderAndIsr", ApiKey.STOP_REPLICA: "StopReplica",
              ApiKey.UPDATE_METADATA: "UpdateMetadata"}


class BrokerRequestHandler:
    def __init__(self, core: BrokerCore, *, lock: threading.Lock | threading.RLock | None = None,
                 advertised: Mapping[int, tuple[int, int]] = SUPPORTED,
                 client_listener: str = "PLAINTEXT", cluster_id: str | None = None,
                 router: ControlledShutdownRouter | None = None,
                 on_effects: Callable[[list[Any]], None] | None = None) -> None:
        self.core = core
        self.lock = lock if lock is not None else threading.Lock()
        self.advertised = dict(advertised)
        self.client_listener = client_listener
        self.cluster_id = cluster_id
        self.router = router
        self.on_effects = on_effects
        self._correlations = itertools.count(1)
        self._counts_lock = threading.Lock()
        self.answers: Counter[tuple[str, str]] = Counter()
        """(api, "applied" or the error's name) -> controller requests answered so."""
        self.foreign_epoch_applied = 0
        self.last_applied: dict[str, float] = {}
        """api -> wall-clock time (``time.time()``) the last request of it was applied."""
        self.metadata_answers = MetadataAnswers(lambda: self.core, self.lock,
                                                self._metadata_wire)

    def handle(self, api_key: int, version: int, header: RequestHeader,
               body: dict[str, Any]) -> dict[str, Any] | bytes | None:
        if api_key in _FROM_WIRE:
            return self._controller_request(api_key, body)
        if api_key == ApiKey.API_VERSIONS:
            return api_versions_body(version, self.advertised)
        if api_key == ApiKey.METADATA:
            return self._metadata(version, body)
        if api_key == ApiKey.CONTROLLED_SHUTDOWN:
            return self._controlled_shutdown(body)
        raise ValueError(f"api key {api_key} is not served by the broker")

    # ------------------------------------------------------------------ controller APIs

    def _controller_request(self, api_key: int, body: Wire) -> Wire:
        request = _FROM_WIRE[api_key](body)
        with self.lock:
            correlation = next(self._correlations)
            own_epoch = self.core.epoch
            effects = self.core.handle(RequestReceived(request, correlation))
            if api_key == ApiKey.UPDATE_METADATA:  # the cache may have changed
                self.metadata_answers.updated()
        response: ControllerResponse | None = None
        others = []
        for eff in effects:
            if isinstance(eff, Respond) and eff.correlation == correlation:
                response = eff.response
            else:
                others.append(eff)
        if others and self.on_effects is not None:
            self.on_effects(others)
        if response is None:
            log.error("the broker core gave no answer to %s", _API_NAMES[api_key])
            response = ControllerResponse(_API_NAMES[api_key], ErrorCode.UNKNOWN_SERVER_ERROR)
        self._count(_API_NAMES[api_key], response.error, request.broker_epoch, own_epoch)
        return C.controller_response_to_wire(response)

    def answer_counts(self) -> tuple[dict[tuple[str, str], int], int, dict[str, float]]:
        """(``answers``, ``foreign_epoch_applied``, ``last_applied``), copied together."""
        with self._counts_lock:
            return dict(self.answers), self.foreign_epoch_applied, dict(self.last_applied)

    def _count(self, api: str, error: int, stamped: object, own_epoch: int | None) -> None:
        """Tally the answer; an applied request stamped with another broker epoch than the
        one the broker held when applying it is counted apart (an independent check of the
        core's KIP-380 fence: it must stay 0)."""
        result = "applied" if error == ErrorCode.NONE else ErrorCode(error).name
        with self._counts_lock:
            self.answers[(api, result)] += 1
            if error == ErrorCode.NONE:
                self.last_applied[api] = time.time()
            if error == ErrorCode.NONE and stamped != own_epoch:
                self.foreign_epoch_applied += 1
        if error == ErrorCode.NONE and stamped != own_epoch:
            log.error("%s stamped broker epoch %s applied by a broker with epoch %s", api,
                      stamped, own_epoch)

    def _controlled_shutdown(self, body: Wire) -> Wire:
        request = C.controlled_shutdown_request_from_wire(body)
        if self.router is None:
            response = ControlledShutdownResponse(ErrorCode.NOT_CONTROLLER)
        else:
            response = self.router.request(request)
        return C.controlled_shutdown_response_to_wire(response)

    # ------------------------------------------------------------------ Metadata

    def _metadata(self, version: int, body: Wire) -> bytes:
        """The encoded answer (``metadata_answers``: built once per metadata generation)."""
        return self.metadata_answers.body(version, requested_topics(body, version))

    def _metadata_wire(self, view: MetadataView, topics: tuple[TopicMetadata, ...]) -> Wire:
        return metadata_response(view, topics, self.client_listener, self.cluster_id)


def metadata_response(view: MetadataView, topics: tuple[TopicMetadata, ...], listener: str,
                      cluster_id: str | None = None) -> Wire:
    brokers = []
    for b in view.live_brokers:
        ep = next((e for e in b.endpoints if e.listener == listener), None)
        if ep is not None:
            brokers.append({"node_id": b.broker_id, "host": ep.host, "port": ep.port,
                            "rack": b.rack})
    reachable = {b["node_id"] for b in brokers}
    return {
        "throttle_time_ms": 0,
        "brokers": brokers,
        "cluster_id": cluster_id,
        "controller_id": -1 if view.controller_id is None else view.controller_id,
        "topics": [_topic(t, reachable) for t in topics],
    }


def _topic(t: TopicMetadata, reachable: set[int]) -> Wire:
    partitions = []
    for index, mp in t.partitions:
        ok = mp.leader in reachable
        partitions.append({
            "error_code": int(ErrorCode.NONE if ok else ErrorCode.LEADER_NOT_AVAILABLE),
            "partition_index": index,
            "leader_id": mp.leader if ok else -1,
            "leader_epoch": mp.leader_epoch,
            "replica_nodes": list(mp.replicas),
            "isr_nodes": list(mp.isr),
            "offline_replicas": list(mp.offline_replicas),
        })
    return {"error_code": int(t.error), "name": t.topic, "is_internal": False,
            "partitions": partitions}
