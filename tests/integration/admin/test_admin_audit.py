"""``kcontrol audit`` and malformed znodes against the real 3-server ensemble."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner, Result
from kazoo.client import KazooClient

from adapters.cli import main
from adapters.zookeeper.audit import audit, view_from_zookeeper
from adapters.zookeeper.codec import encode
from fsm import zk_paths
from fsm.values import Endpoint, LeaderAndIsr, TopicAssignment
from fsm.znodes import (
    BrokerRegistration,
    ControllerEpochZnode,
    ControllerZnode,
    PreferredElectionZnode,
    ReassignmentZnode,
)
from invariants import check_state

pytestmark = pytest.mark.integration


def run(hosts: str, command: str, *more: str) -> Result:
    args = [*command.split(), *more]
    return CliRunner().invoke(main, args, env={"KCONTROL_ZOOKEEPER": hosts})


def put(client: KazooClient, path: str, value: object) -> None:
    client.create(path, encode(path, value), makepath=True)


def set_state(client: KazooClient, topic: str, p: int, li: LeaderAndIsr) -> None:
    path = zk_paths.partition_state(topic, p)
    client.set(path, encode(path, li))


def consistent_cluster(client: KazooClient) -> None:
    """Three brokers, controller 1 elected Kafka's way (one multi with the epoch increment),
    topic t with two partitions, a reassignment and a preferred election pending."""
    for b in (1, 2, 3):
        path = zk_paths.broker(b)
        data = encode(path, BrokerRegistration(b, (Endpoint("PLAINTEXT", "localhost", 9090 + b),)))
        client.create(path, data, ephemeral=True, makepath=True)
    put(client, zk_paths.CONTROLLER_EPOCH, ControllerEpochZnode(0))
    tx = client.transaction()
    tx.create(
        zk_paths.CONTROLLER, encode(zk_paths.CONTROLLER, ControllerZnode(1, 1)), ephemeral=True
    )
    tx.set_data(
        zk_paths.CONTROLLER_EPOCH,
        encode(zk_paths.CONTROLLER_EPOCH, ControllerEpochZnode(1)),
        version=0,
    )
    assert not any(isinstance(r, Exception) for r in tx.commit())
    put(client, "/brokers/topics/t", TopicAssignment.of({0: [1, 2, 3], 1: [2, 3, 1]}))
    put(client, zk_paths.partition_state("t", 0), LeaderAndIsr(1, 0, (1, 2, 3), 1))
    put(client, zk_paths.partition_state("t", 1), LeaderAndIsr(2, 4, (2, 3), 1))
    put(client, "/brokers/topics/u", TopicAssignment.of({0: [3]}))
    put(client, zk_paths.partition_state("u", 0), LeaderAndIsr(-1, 2, (3,), 1))
    put(client, zk_paths.REASSIGN_PARTITIONS, ReassignmentZnode(((("t", 1), (2, 3, 1)),)))
    put(client, zk_paths.PREFERRED_REPLICA_ELECTION, PreferredElectionZnode((("t", 0),)))


def test_audit_passes_on_a_consistent_cluster(zk_client: KazooClient, zk_chroot: str) -> None:
    consistent_cluster(zk_client)
    r = run(zk_chroot, "audit")
    assert r.exit_code == 0, r.output
    assert "all invariants hold" in r.stdout
    assert "controller 1, controller epoch 1, 3 broker(s), 2 topic(s)" in r.stdout
    report = json.loads(run(zk_chroot, "audit --json").stdout)
    assert report["ok"] is True and report["violations"] == []
    # the audit's view is the catalogue's GlobalView, checked by the same predicates
    view = view_from_zookeeper(zk_client)
    assert view.zk is not None and view.brokers is None and view.controllers is None
    assert view.zk.controller == 1 and view.zk.controller_epoch == 1
    assert view.zk.registered.keys() == {1, 2, 3}
    assert view.zk.assignment[("t", 1)] == (2, 3, 1)
    assert view.zk.reassigning == {("t", 1): (2, 3, 1)}
    assert check_state(view) == []


VIOLATIONS = {
    "leader_in_isr": LeaderAndIsr(3, 1, (1, 2), 1),
    "isr_within_assigned_replicas": LeaderAndIsr(1, 1, (1, 4), 1),
    "isr_never_empty": LeaderAndIsr(-1, 1, (), 1),
    "leader_is_registered_or_none": None,  # built below: broker 3 leads, then unregisters
    "controller_epochs_not_ahead_of_zookeeper": LeaderAndIsr(1, 1, (1, 2, 3), 9),
}


@pytest.mark.parametrize("invariant", sorted(VIOLATIONS))
def test_audit_fails_on_each_partition_violation(
    zk_client: KazooClient, zk_chroot: str, invariant: str
) -> None:
    consistent_cluster(zk_client)
    if invariant == "leader_is_registered_or_none":
        set_state(zk_client, "t", 0, LeaderAndIsr(3, 1, (1, 2, 3), 1))
        zk_client.delete(zk_paths.broker(3))
    else:
        set_state(zk_client, "t", 0, VIOLATIONS[invariant])
    r = run(zk_chroot, "audit --json")
    assert r.exit_code == 1, r.output
    rows = json.loads(r.stdout)["violations"]
    assert {(v["invariant"], v["entity"]) for v in rows} == {(invariant, "t-0")}
    table = run(zk_chroot, "audit")
    assert table.exit_code == 1 and invariant in table.stdout and "t-0" in table.stdout


def test_audit_fails_when_controller_and_epoch_disagree(
    zk_client: KazooClient, zk_chroot: str
) -> None:
    consistent_cluster(zk_client)
    # a second epoch increment without a new election: /controller is no longer the winner of
    # the multi that set /controller_epoch
    zk_client.set(
        zk_paths.CONTROLLER_EPOCH, encode(zk_paths.CONTROLLER_EPOCH, ControllerEpochZnode(2))
    )
    r = run(zk_chroot, "audit --json")
    assert r.exit_code == 1
    rows = json.loads(r.stdout)["violations"]
    assert [(v["invariant"], v["entity"]) for v in rows] == [
        ("controller_elected_with_epoch", "/controller")
    ]
    assert "did not increment the epoch in the same multi" in rows[0]["detail"]
    # and without /controller_epoch at all
    zk_client.delete(zk_paths.CONTROLLER_EPOCH)
    rows = json.loads(run(zk_chroot, "audit --json").stdout)["violations"]
    assert [v["invariant"] for v in rows] == ["controller_elected_with_epoch"]
    assert "/controller_epoch is missing" in rows[0]["detail"]


MALFORMED = {
    zk_paths.REASSIGN_PARTITIONS: b'{"version":1,"partitions":[{"topic":"t","partition":0}]}',
    zk_paths.PREFERRED_REPLICA_ELECTION: b"{not json",
    "/brokers/topics/t": b'{"version":1,"partitions":{"0":"1,2,3"}}',
    zk_paths.partition_state("t", 1): b'{"version":1,"leader":"2","leader_epoch":0,'
    b'"controller_epoch":1,"isr":[2]}',
}


@pytest.mark.parametrize("path", sorted(MALFORMED))
def test_malformed_znodes_are_reported_not_fatal(
    zk_client: KazooClient, zk_chroot: str, path: str
) -> None:
    consistent_cluster(zk_client)
    zk_client.set(path, MALFORMED[path])

    r = run(zk_chroot, "audit --json")
    assert r.exit_code == 1, r.output
    rows = json.loads(r.stdout)["violations"]
    assert [(v["invariant"], v["entity"]) for v in rows] == [("znode-decodes", path)]
    table = run(zk_chroot, "audit")
    assert table.exit_code == 1 and "znode-decodes" in table.stdout and path in table.stdout

    r = run(zk_chroot, "topics describe")
    assert r.exit_code == 1
    lines = r.stdout.splitlines()
    errors = [line for line in lines if "Error: " in line]
    assert len(errors) == 1 and path in errors[0]
    # everything else still prints
    assert "Topic: u\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: " in lines
    assert "\tTopic: u\tPartition: 0\tLeader: none\tReplicas: 3\tIsr: 3" in lines
    if path != "/brokers/topics/t":
        assert any(line.startswith("\tTopic: t\tPartition: 0\tLeader: 1") for line in lines)


def test_audit_function_keeps_going_past_bad_children(zk_client: KazooClient) -> None:
    consistent_cluster(zk_client)
    zk_client.create("/brokers/topics/t/partitions/x", b"", makepath=True)
    zk_client.create("/brokers/ids/seven", b"{}", makepath=True)
    state, rows = audit(zk_client)
    assert {(r.invariant, r.entity) for r in rows} == {
        ("znode-decodes", "/brokers/topics/t/partitions/x"),
        ("znode-decodes", "/brokers/ids/seven"),
    }
    assert len(state.partition_states) == 3
