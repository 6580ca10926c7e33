"""The controller's APIs over the wire, against three real voter processes hosting the
quorum controller: a broker registers with the active controller and gets an epoch, then
heartbeats until it is unfenced; a standby answers NOT_CONTROLLER; CreateTopics over the wire
makes a topic every controller's committed image holds under the same id; several requests
in flight on one connection are each answered under their own correlation id; ApiVersions on
a controller lists the controller's APIs; ``kcontrol cluster-id`` and ``kcontrol unregister``
(sent to a standby, followed to the active controller); ``quorum describe --status`` names the
cluster."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner

from adapters.cli import main
from adapters.kraft_node.wire_client import WireClient, from_wire, to_wire
from adapters.raft_node.args import DEFAULT_CLUSTER_ID
from adapters.raft_node.launcher import LocalQuorum, Voter
from fsm.errors import ErrorCode
from fsm.kraft.controller import requests as rq
from fsm.kraft.records.uuid import uuid_to_base64
from fsm.kraft.records.values import BrokerEndpoint

pytestmark = pytest.mark.integration

WAIT_S = 20.0
POLL_S = 0.05


@pytest.fixture(scope="module")
def quorum(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LocalQuorum, Voter]]:
    q = LocalQuorum(tmp_path_factory.mktemp("quorum"), controller=True,
                    election_timeout_ms=300, fetch_timeout_ms=1200,
                    election_backoff_max_ms=300)
    q.start()
    try:
        leader = q.wait_leader(WAIT_S)
        q.wait_for("the leader's controller active",
                   lambda _: _admin(leader, "brokers").get("active"), WAIT_S)
        yield q, leader
    finally:
        q.stop()


def _admin(v: Voter, op: str) -> dict[str, Any]:
    try:
        return v.request(op)
    except Exception:  # noqa: BLE001 -- a node still starting: polled again
        return {}


def client(v: Voter) -> WireClient:
    return WireClient("127.0.0.1", v.port, timeout=10)


def register(c: WireClient, broker_id: int) -> int:
    answer = c.call_value(rq.BrokerRegistrationRequest(
        broker_id, DEFAULT_CLUSTER_ID, bytes([broker_id]) * 16,
        (BrokerEndpoint("PLAINTEXT", "127.0.0.1", 9000 + broker_id),)))
    assert answer.error is ErrorCode.NONE and answer.broker_epoch >= 0, answer
    return answer.broker_epoch  # type: ignore[no-any-return]


def unfence(c: WireClient, broker_id: int, epoch: int) -> rq.BrokerHeartbeatResponse:
    deadline = time.monotonic() + WAIT_S
    while True:
        answer = c.call_value(rq.BrokerHeartbeatRequest(broker_id, epoch, 1 << 40, False))
        assert answer.error is ErrorCode.NONE, answer
        if not answer.is_fenced:
            return answer  # type: ignore[no-any-return]
        assert time.monotonic() < deadline, answer
        time.sleep(POLL_S)


def standby(q: LocalQuorum, leader: Voter) -> Voter:
    return next(v for v in q.voters.values() if v is not leader)


def test_a_broker_registers_and_is_unfenced_by_heartbeats(quorum: Any) -> None:
    q, leader = quorum
    with client(leader) as c:
        epoch = register(c, 1)
        answer = unfence(c, 1, epoch)
        assert answer.is_caught_up and not answer.should_shut_down
    held = q.wait_for("every controller holds broker 1 unfenced", lambda _: all(
        _admin(v, "brokers").get("brokers", {}).get("1", {}).get("fenced") is False
        for v in q.voters.values()), WAIT_S)
    assert held


def test_a_standby_answers_not_controller(quorum: Any) -> None:
    q, leader = quorum
    with client(standby(q, leader)) as c:
        answer = c.call_value(rq.BrokerRegistrationRequest(9, DEFAULT_CLUSTER_ID, b"9" * 16))
        heartbeat = c.call_value(rq.BrokerHeartbeatRequest(9, 0, 0, False))
    assert answer.error is ErrorCode.NOT_CONTROLLER
    assert heartbeat.error is ErrorCode.NOT_CONTROLLER


def test_create_topics_reaches_every_controllers_committed_image(quorum: Any) -> None:
    q, leader = quorum
    with client(leader) as c:
        # two brokers unfenced just now: broker 1 (the first test's) stops heartbeating and
        # its lease may have run out by the time this test runs
        unfence(c, 2, register(c, 2))
        unfence(c, 4, register(c, 4))
        answer = c.call_value(rq.CreateTopicsRequest(
            (rq.CreatableTopic("orders", num_partitions=3, replication_factor=2),), ()))
    (result,) = answer.topics
    assert result.error is ErrorCode.NONE, result
    topic_id = uuid_to_base64(result.topic_id)

    def holds(_: object) -> bool:
        views = [_admin(v, "topics").get("topics", {}).get("orders") for v in q.voters.values()]
        return all(view is not None and view["topic_id"] == topic_id
                   and len(view["partitions"]) == 3 for view in views)

    q.wait_for("every controller holds topic orders", holds, WAIT_S)


def test_requests_in_flight_on_one_connection_get_their_own_answers(quorum: Any) -> None:
    q, leader = quorum
    with client(leader) as c:
        epoch = register(c, 3)
        sent = [
            rq.CreateTopicsRequest((rq.CreatableTopic("pipe-a", 1, 1),), ()),
            rq.BrokerHeartbeatRequest(3, epoch, 1 << 40, False),
            rq.ListPartitionReassignmentsRequest(),
            rq.CreateTopicsRequest((rq.CreatableTopic("pipe-b", 2, 1),), ()),
            rq.BrokerHeartbeatRequest(3, epoch + 1000, 0, False),  # a stale epoch
            rq.CreateTopicsRequest((rq.CreatableTopic("pipe-a", 1, 1),), ()),  # exists now
        ]
        ids = []
        for request in sent:
            key, version, body = to_wire(request)
            ids.append((c.send(key, version, body), key, version))
        answers = {cid: from_wire(key, version, c.receive(cid))
                   for cid, key, version in reversed(ids)}  # received in any order
    got = [answers[cid] for cid, _, _ in ids]
    assert [t.name for t in got[0].topics] == ["pipe-a"] and got[0].topics[0].error.name == "NONE"
    assert isinstance(got[1], rq.BrokerHeartbeatResponse) and got[1].error is ErrorCode.NONE
    assert isinstance(got[2], rq.ListPartitionReassignmentsResponse)
    assert [t.name for t in got[3].topics] == ["pipe-b"]
    assert got[4].error is ErrorCode.STALE_BROKER_EPOCH
    assert got[5].topics[0].error is ErrorCode.TOPIC_ALREADY_EXISTS


def test_api_versions_on_a_controller_lists_the_controllers_apis(quorum: Any) -> None:
    q, leader = quorum
    with client(standby(q, leader)) as c:
        versions = c.api_versions()
    assert {1, 52, 55, 19, 20, 37, 43, 45, 46, 56, 60, 62, 63, 64} <= set(versions)


def test_cluster_id_from_any_controller(quorum: Any) -> None:
    q, leader = quorum
    r = CliRunner().invoke(main, ["cluster-id", "--bootstrap-controller",
                                  f"127.0.0.1:{standby(q, leader).port}"])
    assert r.exit_code == 0, r.output
    assert r.output == f"Cluster ID: {DEFAULT_CLUSTER_ID}\n"


def test_quorum_status_names_the_cluster(quorum: Any) -> None:
    q, leader = quorum
    r = CliRunner().invoke(main, ["quorum", "describe", "--status", "--bootstrap-controller",
                                  f"127.0.0.1:{standby(q, leader).port}"])
    assert r.exit_code == 0, r.output
    assert f"ClusterId:              {DEFAULT_CLUSTER_ID}\n" in r.output
    assert f"LeaderId:               {leader.node_id}\n" in r.output  # followed from a standby


def test_unregister_through_a_standby(quorum: Any) -> None:
    q, leader = quorum
    with client(leader) as c:
        register(c, 7)
    r = CliRunner().invoke(main, ["unregister", "--id", "7", "--bootstrap-controller",
                                  f"127.0.0.1:{standby(q, leader).port}"])
    assert r.exit_code == 0, r.output
    assert r.output == "Broker 7 is no longer registered.\n"
    q.wait_for("broker 7 gone from every controller", lambda _: all(
        "7" not in _admin(v, "brokers").get("brokers", {"7": 1}) for v in q.voters.values()),
        WAIT_S)


def test_describe_cluster_lists_the_unfenced_brokers_and_the_leader(quorum: Any) -> None:
    q, leader = quorum
    with client(leader) as c:
        unfence(c, 5, register(c, 5))
        register(c, 8)  # never heartbeats: stays fenced
    other = standby(q, leader)
    q.wait_for("the standby holds broker 8", lambda _: "8" in _admin(other, "brokers").get(
        "brokers", {}), WAIT_S)
    with client(other) as c:
        answer = c.call_value(rq.DescribeClusterRequest())
    assert answer.error is ErrorCode.NONE and answer.cluster_id == DEFAULT_CLUSTER_ID
    assert answer.controller_id == leader.node_id
    listed = {b.broker_id: (b.host, b.port) for b in answer.brokers}
    assert listed[5] == ("127.0.0.1", 9005) and 8 not in listed
