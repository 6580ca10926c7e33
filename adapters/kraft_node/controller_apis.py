"""The controller's APIs on a controller node's listener: ``ControllerApis`` is the
``ServedApis`` (``adapters.raft_transport.served``) its transport hands every request of
BrokerRegistration (62), BrokerHeartbeat (63), UnregisterBroker (64), AlterPartition (56),
CreateTopics (19), DeleteTopics (20), CreatePartitions (37), ElectLeaders (43),
AlterPartitionReassignments (45), ListPartitionReassignments (46) and DescribeCluster (60).

On the transport's I/O thread (never blocking for long): the frame is decoded with kwire's
codec (``kraft_frames``, ``kraft_convert``) into a value of
``fsm.kraft.controller.requests`` and handed to the hosted quorum controller through the
shell (``RaftNodeShell.request`` -> ``ControllerRequest(token, value)``). When its
``Reply(token, response)`` comes (on the shell's event thread) the answer is encoded there and
given back to the transport, which writes it on the request's own connection under its own
correlation id. A standby's controller answers NOT_CONTROLLER itself; a node that stopped or
halted answers NOT_CONTROLLER too (ask another controller); past the transport's deadline the
answer is REQUEST_TIMED_OUT.

CreateTopics: the core draws no randomness, so the fresh topic ids are drawn here (Kafka's
rule: never the zero id, never one whose text starts with ``-``). DescribeCluster is read on
the event thread between two events: the cluster id, the current leader as the controller
id, and the committed image's registered unfenced brokers -- or, asked for endpoint type 2
(KIP-919's controllers), the voters' controller listeners.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from types import ModuleType
from typing import Any

from adapters.raft_transport.served import Inbound, Reply
from fsm.errors import ErrorCode
from fsm.kraft.controller import requests as rq
from fsm.kraft.records.uuid import ZERO_UUID, Uuid, uuid_to_base64

log = logging.getLogger("kcontrol.kraft.controller_apis")

DESCRIBE_CLUSTER = 60
CREATE_TOPICS = 19


def new_topic_id(random: Callable[[int], bytes] = os.urandom) -> Uuid:
    """A fresh topic id: 16 random bytes, not zero, not printing with a leading ``-``."""
    for _ in range(100):
        value = random(16)
        if value != ZERO_UUID and not uuid_to_base64(value).startswith("-"):
            return value
    raise RuntimeError("no usable random topic id in 100 draws")


def with_topic_ids(request: Any, random: Callable[[int], bytes] = os.urandom) -> Any:
    """``request`` with one fresh topic id per topic (a CreateTopics from the wire has none)."""
    if isinstance(request, rq.CreateTopicsRequest) and \
            len(request.new_topic_ids) != len(request.topics):
        ids = tuple(new_topic_id(random) for _ in request.topics)
        return dataclasses.replace(request, new_topic_ids=ids)
    return request


def codec() -> tuple[ModuleType, ModuleType, ModuleType]:
    """kwire's (frames, convert, registry) modules."""
    from adapters.network.codec import kraft_convert, kraft_frames, kraft_registry

    return kraft_frames, kraft_convert, kraft_registry


class ControllerApis:
    def __init__(self, shell: Any, cluster_id: str, *,
                 modules: tuple[Any, Any, Any] | None = None,
                 random: Callable[[int], bytes] = os.urandom,
                 listener_name: str | None = None,
                 voters: Mapping[int, tuple[str, int]] | None = None) -> None:
        """``shell``: the node's ``RaftNodeShell`` hosting the controller (``request``,
        ``call``, ``status``, ``runner``); ``listener_name``: the brokers' listener whose
        endpoint DescribeCluster names (default: each broker's first); ``voters``: the
        controllers DescribeCluster names when asked for them (endpoint type 2)."""
        self.shell = shell
        self.cluster_id = cluster_id
        self.frames, self.convert, registry = modules if modules is not None else codec()
        self.random = random
        self.listener_name = listener_name
        self.voters = dict(voters or {})
        served: Mapping[int, tuple[int, int]] = registry.CONTROLLER_SERVED
        self.supported: dict[int, tuple[int, int]] = {
            int(k): v for k, v in served.items() if int(k) not in _QUORUM_OWN}

    # ------------------------------------------------------------------ I/O thread
    def handle(self, request: Inbound, reply: Reply) -> None:
        parsed = self.frames.parse_request(request.frame)
        request.context = parsed.body
        value = self.convert.request_from_wire(request.api_key, request.api_version,
                                               parsed.body)
        if request.api_key == DESCRIBE_CLUSTER and _endpoint_type(parsed.body) == CONTROLLERS:
            future: Future[Any] = Future()
            future.set_result(self._describe_controllers())
        elif request.api_key == DESCRIBE_CLUSTER:
            future = self.shell.call(self._describe_cluster)
        else:
            future = self.shell.request(with_topic_ids(value, self.random))
        future.add_done_callback(lambda f: reply(self._answer(request, f)))

    def expired(self, request: Inbound) -> bytes:
        return self._error_frame(request, ErrorCode.REQUEST_TIMED_OUT)

    # ------------------------------------------------------------------ any thread
    def _answer(self, request: Inbound, future: Future[Any]) -> bytes:
        try:
            value = future.result()
        except RuntimeError as exc:  # the node stopped, halted, or its queue is full
            log.info("api key %d (correlation id %d): %s: answered NOT_CONTROLLER",
                     request.api_key, request.correlation_id, exc)
            return self._error_frame(request, ErrorCode.NOT_CONTROLLER)
        except Exception:  # noqa: BLE001 -- a bug: said, and answered, not silent
            log.exception("api key %d (correlation id %d) failed", request.api_key,
                          request.correlation_id)
            return self._error_frame(request, ErrorCode.UNKNOWN_SERVER_ERROR)
        try:
            body = self.convert.response_to_wire(request.api_key, request.api_version, value)
            if request.api_key == DESCRIBE_CLUSTER and request.api_version >= 1:
                body["endpoint_type"] = _endpoint_type(request.context)
            return self.frames.encode_response(request.api_key, request.api_version,  # type: ignore[no-any-return]
                                               request.correlation_id, body)
        except Exception:  # noqa: BLE001 -- an answer that does not encode is a bug
            log.exception("api key %d: the answer %r does not encode", request.api_key, value)
            return self._error_frame(request, ErrorCode.UNKNOWN_SERVER_ERROR)

    def _error_frame(self, request: Inbound, error: ErrorCode) -> bytes:
        body = self.convert.error_response(request.api_key, request.api_version,
                                           request.context or {}, error)
        return self.frames.encode_response(request.api_key, request.api_version,  # type: ignore[no-any-return]
                                           request.correlation_id, body)

    def _describe_controllers(self) -> Any:
        """DescribeCluster with endpoint type 2 (KIP-919): the voters' controller listeners
        (how ``kcontrol quorum describe`` finds the leader's address)."""
        return rq.DescribeClusterResponse(
            ErrorCode.NONE, cluster_id=self.cluster_id,
            controller_id=self.shell.status.leader_id,
            brokers=tuple(rq.DescribeClusterBroker(n, host, port)
                          for n, (host, port) in sorted(self.voters.items())))

    # ------------------------------------------------------------------ event thread
    def _describe_cluster(self) -> Any:
        controller = getattr(self.shell.runner, "controller", None)
        image = controller.committed if controller is not None else None
        brokers = []
        for broker_id, reg in sorted(image.brokers.items()) if image is not None else ():
            if reg.fenced or not reg.end_points:
                continue
            endpoint = next((e for e in reg.end_points if e.name == self.listener_name),
                            reg.end_points[0])
            brokers.append(rq.DescribeClusterBroker(broker_id, endpoint.host, endpoint.port,
                                                    reg.rack))
        return rq.DescribeClusterResponse(ErrorCode.NONE, cluster_id=self.cluster_id,
                                          controller_id=self.shell.status.leader_id,
                                          brokers=tuple(brokers))


BROKERS, CONTROLLERS = 1, 2
"""DescribeCluster's ``endpoint_type`` (v1+, KIP-919)."""


def _endpoint_type(body: Any) -> int:
    value = body.get("endpoint_type", BROKERS) if isinstance(body, dict) else BROKERS
    return value if value in (BROKERS, CONTROLLERS) else BROKERS


_QUORUM_OWN = frozenset({1, 18, 52, 53, 54, 55, 59})
"""The quorum's APIs and ApiVersions: answered by the transport itself."""
