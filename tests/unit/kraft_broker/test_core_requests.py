"""The core's requests on the wire (kwire's codec at SEND_VERSIONS): what the controller reads
is the value the core sent (the advertised listeners, cluster and incarnation ids included);
its answer comes back as ControllerResponse, NOT_CONTROLLER / a loss / an answer that does not
decode as ControllerUnreachable."""

from __future__ import annotations

from typing import Any

import pytest

from adapters.kraft_broker.controller_channel import Lost
from adapters.kraft_broker.core_requests import CoreRequests
from adapters.network.codec import kraft_convert, kraft_frames
from adapters.network.codec.kraft_registry import SEND_VERSIONS
from fsm.errors import ErrorCode
from fsm.kraft.broker.events import ControllerResponse, ControllerUnreachable
from fsm.kraft.controller import requests as rq
from fsm.kraft.records.uuid import uuid_of
from fsm.kraft.records.values import BrokerEndpoint

REGISTRATION = rq.BrokerRegistrationRequest(
    4, "cluster-x", uuid_of(77), (BrokerEndpoint("PLAINTEXT", "127.0.0.1", 9092),), rack="r1")
HEARTBEAT = rq.BrokerHeartbeatRequest(4, 12, 99, want_fence=False, want_shut_down=True)
ALTER = rq.AlterPartitionRequest(4, 12, (rq.AlterPartitionItem(uuid_of(5), 0, 3, (4, 2), 7),))


class FakeChannel:
    leader = 3000

    def __init__(self) -> None:
        self.sent: list[tuple[int, int, bytes, Any]] = []

    def submit(self, api_key: int, version: int, body: bytes, done: Any,
               timeout_s: float) -> bool:
        self.sent.append((api_key, version, body, done))
        return True


def _sent(request: Any) -> tuple[FakeChannel, list[object], int, int, Any]:
    channel, events = FakeChannel(), []
    CoreRequests(channel, events.append, 2.0, 4).send(request)  # type: ignore[arg-type]
    [(key, version, body, done)] = channel.sent
    return channel, events, key, version, done


@pytest.mark.parametrize("request_", [REGISTRATION, HEARTBEAT, ALTER])
def test_the_controller_reads_what_the_core_sent(request_: Any) -> None:
    channel, _, key, version, _ = _sent(request_)
    assert version == SEND_VERSIONS[key]
    frame = kraft_frames.encode_request(key, version, 1, "b", channel.sent[0][2])
    parsed = kraft_frames.parse_request(frame[4:])
    assert kraft_convert.request_from_wire(key, version, parsed.body) == request_


def _answer(done: Any, key: int, version: int, response: Any) -> None:
    body = kraft_convert.response_to_wire(key, version, response)
    done(kraft_frames.encode_response(key, version, 5, body)[4:], None)


def test_answers_and_losses_as_the_core_hears_them() -> None:
    _, events, key, version, done = _sent(REGISTRATION)
    _answer(done, key, version, rq.BrokerRegistrationResponse(ErrorCode.NONE, 31))
    assert events == [ControllerResponse(REGISTRATION,
                                         rq.BrokerRegistrationResponse(ErrorCode.NONE, 31))]
    _, events, key, version, done = _sent(HEARTBEAT)
    _answer(done, key, version, rq.BrokerHeartbeatResponse(ErrorCode.NOT_CONTROLLER))
    assert events == [ControllerUnreachable(HEARTBEAT)]
    _, events, key, version, done = _sent(HEARTBEAT)
    _answer(done, key, version, rq.BrokerHeartbeatResponse(ErrorCode.STALE_BROKER_EPOCH))
    assert events == [ControllerResponse(HEARTBEAT,
                                         rq.BrokerHeartbeatResponse(ErrorCode.STALE_BROKER_EPOCH))]
    _, events, _, _, done = _sent(ALTER)
    done(None, Lost("connection lost", True))
    done2 = _sent(ALTER)
    done2[4](b"\x00\x00\x00\x05\x00garbage", None)
    assert events == [ControllerUnreachable(ALTER)]
    assert done2[1] == [ControllerUnreachable(ALTER)]
