"""The broker's client answers, frame in, frame out: ApiVersions lists exactly what a KRaft
broker serves; Metadata and DescribeCluster come from the core's image (fenced brokers and
controllers never appear, the controller id is a live broker); an admin request is forwarded
as the very body bytes the client wrote, and the forwarder relays the controller's answer
under the client's correlation id, trying again after NOT_CONTROLLER and answering
REQUEST_TIMED_OUT when no controller answers; what cannot be answered is a ClientError (the
listener closes that connection only)."""

from __future__ import annotations

import struct
from concurrent.futures import Future
from typing import Any

import pytest

from adapters.kraft_broker.client_apis import ADVERTISED, ClientApis, ClientError
from adapters.kraft_broker.controller_channel import Lost
from adapters.kraft_broker.forwarding import Forwarder
from adapters.network.codec import dispatch, kraft_convert, kraft_frames
from adapters.network.codec.apis.metadata import all_topics_request
from adapters.network.codec.headers import RequestHeader
from adapters.network.codec.kraft_registry import SEND_VERSIONS
from fsm.errors import ErrorCode
from fsm.kraft.broker import KRaftBroker, KRaftBrokerConfig
from fsm.kraft.broker.events import MetadataFetched
from fsm.kraft.broker.metadata_answers import metadata_answer
from fsm.kraft.controller import requests as rq
from fsm.kraft.records.uuid import uuid_of
from fsm.kraft.records.values import (
    BrokerEndpoint,
    PartitionRecord,
    RegisterBrokerRecord,
    TopicRecord,
    UnfenceBrokerRecord,
)

CREATE = 19


def _core() -> KRaftBroker:
    """An image: brokers 1 and 2 unfenced, 3 fenced; topic t led by 2."""
    core = KRaftBroker(KRaftBrokerConfig(1, "c1"))
    regs = [RegisterBrokerRecord(b, uuid_of(b), b, (BrokerEndpoint("PLAINTEXT", "h", 9000 + b),
                                                    BrokerEndpoint("OTHER", "o", 8000 + b)),
                                 rack=f"r{b}") for b in (1, 2, 3)]
    core.handle(MetadataFetched(0, (*regs, UnfenceBrokerRecord(1, 1), UnfenceBrokerRecord(2, 2),
                                    TopicRecord("t", uuid_of(7)),
                                    PartitionRecord(0, uuid_of(7), (2, 3), (2, 3), leader=2))))
    return core


class FakeForwarder:
    def __init__(self) -> None:
        self.calls: list[tuple[int, int, int, bytes, dict[str, Any]]] = []

    def forward(self, api_key: int, version: int, correlation_id: int, body: bytes,
                decoded: dict[str, Any]) -> bytes:
        self.calls.append((api_key, version, correlation_id, body, decoded))
        return b"forwarded"


def _apis(core: KRaftBroker, forwarder: Any = None) -> ClientApis:
    def metadata(topics: Any) -> Future[Any]:
        f: Future[Any] = Future()
        f.set_result(metadata_answer(core.image, "c1", topics))
        return f

    def on_core(fn: Any) -> Future[Any]:
        f: Future[Any] = Future()
        f.set_result(fn(core))
        return f

    return ClientApis(metadata, on_core, forwarder or FakeForwarder(), "c1")


def _body(frame: bytes) -> bytes:
    return frame[4:]  # the size prefix off: what the listener hands the handler


def test_api_versions_lists_exactly_what_the_broker_serves() -> None:
    apis = _apis(_core())
    frame = dispatch.encode_request(RequestHeader(18, 3, 5, "c"), {
        "client_software_name": "x", "client_software_version": "1"})
    _, body = dispatch.decode_response(18, 3, _body(apis.handle("PLAINTEXT", _body(frame))))
    got = {e["api_key"]: (e["min_version"], e["max_version"]) for e in body["api_keys"]}
    assert set(got) == {3, 18, 19, 20, 37, 43, 45, 46, 60, 64}
    assert got == ADVERTISED
    assert not set(got) & {1, 52, 55, 56, 62, 63}  # no quorum or controller-only API


def test_metadata_and_describe_cluster_show_the_live_brokers_of_the_listener() -> None:
    apis = _apis(_core())
    frame = dispatch.encode_request(RequestHeader(3, 8, 9, "c"), all_topics_request(8))
    out = _body(apis.handle("OTHER", _body(frame)))
    corr, body = dispatch.decode_response(3, 8, out)
    assert corr == 9
    assert [(b["node_id"], b["port"]) for b in body["brokers"]] == [(1, 8001), (2, 8002)]
    assert body["controller_id"] == 1 and body["cluster_id"] == "c1"
    [t] = body["topics"]
    assert t["partitions"][0]["leader_id"] == 2
    assert t["partitions"][0]["offline_replicas"] == [3]

    version = 0
    frame = kraft_frames.encode_request(60, version, 4, "c", {
        "include_cluster_authorized_operations": False})
    corr, body = kraft_frames.decode_response(60, version, _body(apis.handle("PLAINTEXT",
                                                                             _body(frame))))
    value = kraft_convert.response_from_wire(60, version, body)
    assert corr == 4 and value.cluster_id == "c1" and value.controller_id == 1
    assert value.brokers == (rq.DescribeClusterBroker(1, "h", 9001, "r1"),
                             rq.DescribeClusterBroker(2, "h", 9002, "r2"))


def test_an_admin_request_is_forwarded_as_the_bytes_the_client_wrote() -> None:
    fwd = FakeForwarder()
    apis = _apis(_core(), fwd)
    request = rq.CreateTopicsRequest((rq.CreatableTopic("x", 2, 1),), ())
    for version in (2, SEND_VERSIONS[CREATE]):  # not flexible (header v1) and flexible (v2)
        wire = kraft_convert.request_to_wire(CREATE, version, request)
        frame = kraft_frames.encode_request(CREATE, version, 77, "client-x", wire)
        assert apis.handle("PLAINTEXT", _body(frame)) == b"forwarded"
        key, v, corr, body, decoded = fwd.calls[-1]
        assert (key, v, corr) == (CREATE, version, 77)
        assert body == kraft_frames.encode_body(CREATE, version, wire, response=False)
        assert decoded["topics"][0]["name"] == "x"


@pytest.mark.parametrize("frame", [
    b"\x00\x00\x00\x00\x00\x00\x00\x01",  # Produce v0: not served
    struct.pack(">hhi", 19, 99, 1),  # CreateTopics v99
    struct.pack(">hhi", 3, 8, 1) + b"\xff",  # Metadata, garbage after the key
    struct.pack(">hhi", 19, 5, 1) + b"\x00\x01x",  # CreateTopics v5, truncated
    b"\x00",  # shorter than a header
])
def test_what_cannot_be_answered_is_a_client_error(frame: bytes) -> None:
    with pytest.raises(ClientError):
        _apis(_core()).handle("PLAINTEXT", frame)


class ScriptedChannel:
    """A controller channel that answers from a script: a response body, or a ``Lost``."""

    def __init__(self, script: list[Any]) -> None:
        self.script = script
        self.leader = 3000
        self.sent: list[tuple[int, int, bytes]] = []
        self.waited: list[int] = []

    def submit(self, api_key: int, version: int, body: bytes, done: Any,
               timeout_s: float) -> bool:
        self.sent.append((api_key, version, body))
        step = self.script.pop(0)
        if isinstance(step, Lost):
            done(None, step)
        else:
            frame = kraft_frames.encode_response(api_key, version, 123456, step)
            done(frame[4:], None)
        return True

    def wait_leader(self, timeout: float, other_than: int = -1) -> int:
        self.waited.append(other_than)
        self.leader += 1
        return self.leader


def _created(code: ErrorCode) -> dict[str, Any]:
    response = rq.CreateTopicsResponse((rq.CreatableTopicResult("x", uuid_of(5), code, None, 2, 1),))
    return kraft_convert.response_to_wire(CREATE, 5, response)


def _forward(channel: ScriptedChannel) -> tuple[int, Any]:
    fwd = Forwarder(channel, request_timeout_s=1.0)  # type: ignore[arg-type]
    request = kraft_convert.request_to_wire(CREATE, 5, rq.CreateTopicsRequest(
        (rq.CreatableTopic("x", 2, 1),), ()))
    body = kraft_frames.encode_body(CREATE, 5, request, response=False)
    out = fwd.forward(CREATE, 5, 42, body, request)
    corr, answer = kraft_frames.decode_response(CREATE, 5, out[4:])
    assert struct.unpack(">i", out[:4])[0] == len(out) - 4
    return corr, kraft_convert.response_from_wire(CREATE, 5, answer)


def test_not_controller_is_tried_again_towards_the_next_leader() -> None:
    channel = ScriptedChannel([_created(ErrorCode.NOT_CONTROLLER), _created(ErrorCode.NONE)])
    corr, answer = _forward(channel)
    assert corr == 42 and answer.topics[0].error == ErrorCode.NONE
    assert len(channel.sent) == 2 and channel.sent[0] == channel.sent[1]
    assert channel.waited == [3000]  # waited for a leader other than the one that refused


def test_unsent_is_tried_again_but_a_sent_and_lost_request_times_out() -> None:
    channel = ScriptedChannel([Lost("no leader", False), _created(ErrorCode.NONE)])
    assert _forward(channel)[1].topics[0].error == ErrorCode.NONE
    channel = ScriptedChannel([Lost("connection lost", True)])
    corr, answer = _forward(channel)
    assert corr == 42 and answer.topics[0].error == ErrorCode.REQUEST_TIMED_OUT
    channel = ScriptedChannel([_created(ErrorCode.NOT_CONTROLLER)] * 4)
    assert _forward(channel)[1].topics[0].error == ErrorCode.REQUEST_TIMED_OUT
    assert len(channel.sent) == 4  # bounded: MAX_TRIES
