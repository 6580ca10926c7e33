"""``ControllerApis`` with stand-ins for kwire's codec and for the node's shell: a request is
handed to the controller as a value (a CreateTopics with fresh, usable topic ids), its answer
encoded under its own correlation id when the controller replies; a node that stopped
answers NOT_CONTROLLER, a request past its deadline REQUEST_TIMED_OUT; DescribeCluster names
the leader and the committed image's unfenced brokers at the asked listener, or the voters
for KIP-919's endpoint type 2."""

from __future__ import annotations

import itertools
import json
from concurrent.futures import Future
from types import SimpleNamespace
from typing import Any

import pytest

from adapters.kraft_node.controller_apis import ControllerApis, new_topic_id, with_topic_ids
from adapters.raft_transport.served import Inbound
from fsm.errors import ErrorCode
from fsm.kraft.controller import requests as rq
from fsm.kraft.image.brokers import BrokerRegistration
from fsm.kraft.records.uuid import ZERO_UUID, uuid_to_base64
from fsm.kraft.records.values import BrokerEndpoint


class Frames:
    encoded: dict[bytes, tuple[Any, ...]] = {}

    @staticmethod
    def parse_request(frame: bytes) -> Any:
        return SimpleNamespace(body=json.loads(frame[8:]))

    @staticmethod
    def encode_response(key: int, version: int, correlation_id: int, body: Any) -> bytes:
        frame = repr((key, version, correlation_id, body)).encode()
        Frames.encoded[frame] = (key, version, correlation_id, body)
        return frame


class Convert:
    values: dict[str, Any] = {}

    @classmethod
    def request_from_wire(cls, key: int, version: int, body: dict[str, Any]) -> Any:
        return cls.values[body["name"]]

    @staticmethod
    def response_to_wire(key: int, version: int, value: Any) -> dict[str, Any]:
        return {"value": value}

    @staticmethod
    def error_response(key: int, version: int, body: Any, error: ErrorCode) -> dict[str, Any]:
        return {"error": error.name, "request": body["name"]}


REGISTRY = SimpleNamespace(CONTROLLER_SERVED={19: (0, 7), 60: (0, 1), 62: (0, 3), 18: (0, 3)})


class Shell:
    def __init__(self) -> None:
        self.requests: list[tuple[Any, Future[Any]]] = []
        self.status = SimpleNamespace(leader_id=2)
        brokers = {
            1: BrokerRegistration(1, 10, b"i" * 16, (BrokerEndpoint("INTERNAL", "h1", 1),
                                                   BrokerEndpoint("PLAINTEXT", "h1", 9092)),
                                  fenced=False),
            2: BrokerRegistration(2, 11, b"j" * 16, (BrokerEndpoint("PLAINTEXT", "h2", 9092),),
                                  fenced=True),
            3: BrokerRegistration(3, 12, b"k" * 16, (BrokerEndpoint("OTHER", "h3", 7),),
                                  rack="r1", fenced=False),
        }
        self.runner = SimpleNamespace(controller=SimpleNamespace(
            committed=SimpleNamespace(brokers=brokers)))

    def request(self, value: Any) -> Future[Any]:
        future: Future[Any] = Future()
        self.requests.append((value, future))
        return future

    def call(self, fn: Any) -> Future[Any]:
        future: Future[Any] = Future()
        future.set_result(fn())
        return future


def apis(shell: Shell, **kwargs: Any) -> ControllerApis:
    return ControllerApis(shell, "cluster-1", modules=(Frames, Convert, REGISTRY),
                          listener_name="PLAINTEXT", **kwargs)


def inbound(key: int, name: str, correlation_id: int = 7, version: int = 1,
            **body: Any) -> Inbound:
    frame = b"\0" * 8 + json.dumps({"name": name, **body}).encode()
    return Inbound(1, key, version, correlation_id, frame, 0.0, None)


def test_the_served_apis_leave_the_quorums_own_out() -> None:
    assert apis(Shell()).supported == {19: (0, 7), 60: (0, 1), 62: (0, 3)}


def test_a_request_is_answered_under_its_correlation_id_once_the_controller_replies() -> None:
    shell = Shell()
    Convert.values["reg"] = rq.BrokerRegistrationRequest(5, "cluster-1", b"x" * 16)
    answers: list[bytes] = []
    apis(shell).handle(inbound(62, "reg", correlation_id=41), answers.append)
    (value, future), = shell.requests
    assert value == Convert.values["reg"] and answers == []
    future.set_result(rq.BrokerRegistrationResponse(ErrorCode.NONE, 77))
    assert answers == [repr((62, 1, 41, {"value": rq.BrokerRegistrationResponse(
        ErrorCode.NONE, 77)})).encode()]


def test_create_topics_gets_one_fresh_id_per_topic() -> None:
    shell = Shell()
    Convert.values["ct"] = rq.CreateTopicsRequest(
        (rq.CreatableTopic("a"), rq.CreatableTopic("b")), ())
    apis(shell).handle(inbound(19, "ct"), lambda _: None)
    ids = shell.requests[0][0].new_topic_ids
    assert len(ids) == 2 and len(set(ids)) == 2 and ZERO_UUID not in ids


def test_a_request_with_its_ids_keeps_them() -> None:
    request = rq.CreateTopicsRequest((rq.CreatableTopic("a"),), (b"\1" * 16,))
    assert with_topic_ids(request) is request


def test_new_topic_id_never_zero_nor_printing_with_a_dash() -> None:
    dash = bytes([0xF8]) + bytes(15)  # prints as "-A..."
    assert uuid_to_base64(dash).startswith("-")
    draws = itertools.chain([ZERO_UUID, dash], itertools.repeat(b"\7" * 16))
    assert new_topic_id(lambda n: next(draws)) == b"\7" * 16


def test_a_stopped_node_answers_not_controller_and_a_late_one_timed_out() -> None:
    shell = Shell()
    Convert.values["reg"] = rq.BrokerRegistrationRequest(5, "cluster-1", b"x" * 16)
    answers: list[bytes] = []
    a = apis(shell)
    request = inbound(62, "reg", correlation_id=3)
    a.handle(request, answers.append)
    shell.requests[0][1].set_exception(RuntimeError("node stopped"))
    assert answers == [repr((62, 1, 3, {"error": "NOT_CONTROLLER",
                                        "request": "reg"})).encode()]
    assert a.expired(request) == repr((62, 1, 3, {"error": "REQUEST_TIMED_OUT",
                                                  "request": "reg"})).encode()


def _describe(shell: Shell, **body: Any) -> tuple[Any, dict[str, Any]]:
    answers: list[bytes] = []
    Convert.values["dc"] = rq.DescribeClusterRequest()
    apis(shell, voters={1: ("c1", 9093), 2: ("c2", 9094)}).handle(
        inbound(60, "dc", **body), answers.append)
    key, version, cid, wire = Frames.encoded[answers[0]]
    return wire["value"], wire


def test_describe_cluster_names_the_leader_and_the_unfenced_brokers() -> None:
    value, wire = _describe(Shell())
    assert value.cluster_id == "cluster-1" and value.controller_id == 2
    assert value.brokers == (rq.DescribeClusterBroker(1, "h1", 9092),
                             rq.DescribeClusterBroker(3, "h3", 7, "r1"))
    assert wire["endpoint_type"] == 1


def test_describe_cluster_for_controllers_names_the_voters() -> None:
    value, wire = _describe(Shell(), endpoint_type=2)
    assert value.brokers == (rq.DescribeClusterBroker(1, "c1", 9093),
                             rq.DescribeClusterBroker(2, "c2", 9094))
    assert wire["endpoint_type"] == 2


@pytest.mark.parametrize("bad", [0, 3, "x"])
def test_an_unknown_endpoint_type_is_read_as_brokers(bad: Any) -> None:
    value, _ = _describe(Shell(), endpoint_type=bad)
    assert [b.broker_id for b in value.brokers] == [1, 3]
