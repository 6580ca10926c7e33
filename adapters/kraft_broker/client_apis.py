"""What a KRaft broker's client listener answers, frame by frame (``ClientApis.handler``):

* ApiVersions (18): exactly what it serves -- ApiVersions and Metadata (``registry``'s
  ranges) and kwire's ``BROKER_SERVED``; an unsupported ApiVersions version gets the codec's
  fallback answer;
* Metadata (3, v0-v8): from the core's replayed image (``MetadataRequest`` ->
  ``ReplyMetadata``), in the ZooKeeper mode's wire shape (``broker_handler.metadata_response``)
  with the endpoints of the listener the request came in on: the live (registered, unfenced)
  brokers, never a controller; the controller id a live broker (KIP-590: it forwards);
* DescribeCluster (60): from the image too, read on the core's thread -- the cluster id,
  the live brokers with their endpoint on this listener and their rack, the controller id as
  in Metadata;
* CreateTopics, DeleteTopics, CreatePartitions, ElectLeaders, AlterPartitionReassignments,
  ListPartitionReassignments, UnregisterBroker: forwarded to the active controller
  (``forwarding``).

Anything else, an unsupported version of anything but ApiVersions, or bytes that do not
decode: ``ClientError``, and the listener closes that connection only (Kafka cannot answer an
API whose layout it does not know). An answer not ready in ``ANSWER_WAIT_S`` (the core is
stuck) closes the connection too.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from adapters.kraft_broker.forwarding import Forwarder
from adapters.network.broker_handler import metadata_response
from adapters.network.codec import dispatch, kraft_convert, kraft_frames, registry
from adapters.network.codec.apis.metadata import requested_topics
from adapters.network.codec.errors import CodecError
from adapters.network.codec.headers import decode_request_header, peek_api
from adapters.network.codec.kraft_registry import BROKER_SERVED, KRAFT_MESSAGES, KRaftApiKey
from adapters.network.codec.primitives import Reader
from fsm.errors import ErrorCode
from fsm.kraft.broker.effects import MetadataAnswer
from fsm.kraft.controller.requests import DescribeClusterBroker, DescribeClusterResponse

API_VERSIONS = int(registry.ApiKey.API_VERSIONS)
METADATA = int(registry.ApiKey.METADATA)
DESCRIBE_CLUSTER = int(KRaftApiKey.DESCRIBE_CLUSTER)
FORWARDED = frozenset(k for k in BROKER_SERVED if k != DESCRIBE_CLUSTER)

ADVERTISED: dict[int, tuple[int, int]] = dict(sorted({
    API_VERSIONS: registry.SUPPORTED[API_VERSIONS],
    METADATA: registry.SUPPORTED[METADATA],
    **BROKER_SERVED,
}.items()))
"""What the broker's client listener serves, as its ApiVersions says."""

ANSWER_WAIT_S = 30.0


class ClientError(Exception):
    """A request this listener cannot answer: close the connection (the message says why)."""


Handler = Callable[[bytes], bytes]


class ClientApis:
    def __init__(self, metadata: Callable[[tuple[str, ...] | None], Future[MetadataAnswer]],
                 on_core: Callable[[Callable[[Any], Any]], Future[Any]],
                 forwarder: Forwarder, cluster_id: str) -> None:
        """``metadata``: the broker shell's; ``on_core``: runs a function of the core on its
        event thread (``BrokerShell.call``)."""
        self.metadata = metadata
        self.on_core = on_core
        self.forwarder = forwarder
        self.cluster_id = cluster_id

    def handler(self, listener: str) -> Handler:
        """The handler of one listener (its name picks the endpoints answers show)."""
        return lambda frame: self.handle(listener, frame)

    def handle(self, listener: str, frame: bytes) -> bytes:
        """The whole response frame for one request frame (size prefix removed)."""
        try:
            api_key, version = peek_api(frame)
            if api_key == API_VERSIONS:
                return self._api_versions(frame)
            if api_key == METADATA:
                return self._metadata(listener, frame)
            if api_key not in BROKER_SERVED:
                raise ClientError(f"api key {api_key} is not served by a KRaft broker")
            lo, hi = BROKER_SERVED[api_key]
            if not lo <= version <= hi:
                raise ClientError(f"{KRaftApiKey(api_key).name} v{version} is not served "
                                  f"(v{lo}-v{hi})")
            request = kraft_frames.parse_request(frame)
            if api_key == DESCRIBE_CLUSTER:
                return self._describe_cluster(listener, request)
            body = frame[_header_length(frame, api_key, version):]
            return self.forwarder.forward(api_key, version, request.header.correlation_id,
                                          body, request.body)
        except CodecError as exc:
            raise ClientError(f"a request that does not decode: {exc}") from None

    # ------------------------------------------------------------------ the answers

    def _api_versions(self, frame: bytes) -> bytes:
        parsed = dispatch.parse_request(frame, {API_VERSIONS: ADVERTISED[API_VERSIONS]})
        if isinstance(parsed, dispatch.Rejected):
            if parsed.action is dispatch.Action.CLOSE:
                raise ClientError(parsed.reason)
            return parsed.response_frame()
        body = dispatch.api_versions_body(parsed.api_version, ADVERTISED)
        return dispatch.encode_response(API_VERSIONS, parsed.api_version,
                                        parsed.header.correlation_id, body)

    def _metadata(self, listener: str, frame: bytes) -> bytes:
        parsed = dispatch.parse_request(frame, {METADATA: ADVERTISED[METADATA]})
        if isinstance(parsed, dispatch.Rejected):
            raise ClientError(parsed.reason)
        version = parsed.api_version
        names = requested_topics(parsed.body, version)
        answer = _wait(self.metadata(None if names is None else tuple(names)))
        body = metadata_response(answer, answer.topics, listener, self.cluster_id)
        return dispatch.encode_response(METADATA, version, parsed.header.correlation_id, body)

    def _describe_cluster(self, listener: str, request: Any) -> bytes:
        cluster_id = self.cluster_id

        def read(core: Any) -> DescribeClusterResponse:
            live = [(b, reg) for b, reg in sorted(core.image.brokers.items())
                    if not reg.fenced and reg.end_points]
            brokers = []
            for b, reg in live:
                ep = next((e for e in reg.end_points if e.name == listener), None)
                if ep is not None:
                    brokers.append(DescribeClusterBroker(b, ep.host, ep.port, reg.rack))
            controller = live[0][0] if live else -1
            return DescribeClusterResponse(ErrorCode.NONE, cluster_id, controller,
                                           tuple(brokers))

        value = _wait(self.on_core(read))
        version = request.api_version
        body = kraft_convert.response_to_wire(DESCRIBE_CLUSTER, version, value)
        return kraft_frames.encode_response(DESCRIBE_CLUSTER, version,
                                            request.header.correlation_id, body)


def _header_length(frame: bytes, api_key: int, version: int) -> int:
    """Where the body of a KRaft request frame begins (header v2 if flexible, else v1)."""
    request, _ = KRAFT_MESSAGES[api_key]
    r = Reader(frame)
    decode_request_header(r, 2 if request.is_flexible(version) else 1)
    return r.pos


def _wait(future: Future[Any]) -> Any:
    try:
        return future.result(ANSWER_WAIT_S)
    except FutureTimeout:
        raise ClientError(f"the broker's core did not answer within {ANSWER_WAIT_S:g} s") \
            from None
    except RuntimeError as exc:
        raise ClientError(str(exc)) from None
