"""The admin commands against the real 3-server ensemble: exactly Kafka's bytes in each znode,
Kafka's refusals, and ``describe`` on a hand-built cluster state."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from kazoo.client import KazooClient

from adapters.cli import main
from adapters.zookeeper.codec import encode
from fsm import zk_paths
from fsm.values import Endpoint, LeaderAndIsr, TopicAssignment
from fsm.znodes import BrokerRegistration

pytestmark = pytest.mark.integration


def run(hosts: str, command: str, *more: str) -> Result:
    """``kcontrol ARGS --zookeeper HOSTS`` in-process (the connect string goes through the env)."""
    args = [*command.split(), *more]
    return CliRunner().invoke(main, args, env={"KCONTROL_ZOOKEEPER": hosts})


def register(client: KazooClient, *ids: int) -> None:
    for b in ids:
        path = zk_paths.broker(b)
        data = encode(path, BrokerRegistration(b, (Endpoint("PLAINTEXT", "localhost", 9090 + b),)))
        client.create(path, data, ephemeral=True, makepath=True)


def put(client: KazooClient, path: str, value: object) -> None:
    client.create(path, encode(path, value), makepath=True)


def raw(client: KazooClient, path: str) -> bytes:
    return client.get(path)[0]


def test_create_writes_kafkas_topic_znode(zk_client: KazooClient, zk_chroot: str) -> None:
    register(zk_client, 1, 2, 3)
    r = run(
        zk_chroot, "topics create --topic t --partitions 4 --replication-factor 3 --start-index 0"
    )
    assert r.exit_code == 0, r.output
    assert r.stdout == "Created topic t.\n"
    assert raw(zk_client, "/brokers/topics/t") == (
        b'{"version":2,"partitions":{"0":[1,2,3],"1":[2,3,1],"2":[3,1,2],"3":[1,3,2]},'
        b'"adding_replicas":{},"removing_replicas":{}}'
    )
    # the controller, not the tool, creates partition states (as in Kafka)
    assert zk_client.exists("/brokers/topics/t/partitions") is None

    # kafka-topics' format: partition 0 on brokers 3,1 and partition 1 on 1,2
    r = run(zk_chroot, "topics create --topic m --replica-assignment 3:1,1:2")
    assert r.exit_code == 0, r.output
    assert raw(zk_client, "/brokers/topics/m") == (
        b'{"version":2,"partitions":{"0":[3,1],"1":[1,2]},'
        b'"adding_replicas":{},"removing_replicas":{}}'
    )


def test_create_refusals(zk_client: KazooClient, zk_chroot: str) -> None:
    register(zk_client, 1, 2)
    assert (
        run(zk_chroot, "topics create --topic t --partitions 1 --replication-factor 1").exit_code
        == 0
    )
    r = run(zk_chroot, "topics create --topic t --partitions 1 --replication-factor 1")
    assert r.exit_code == 1
    assert "TOPIC_ALREADY_EXISTS" in r.stderr and "Topic 't' already exists" in r.stderr

    r = run(zk_chroot, "topics create --topic u --partitions 1 --replication-factor 3")
    assert r.exit_code == 1
    assert "Replication factor: 3 larger than available brokers: 2" in r.stderr
    assert not zk_client.exists("/brokers/topics/u")

    r = run(zk_chroot, "topics create --topic u --replica-assignment 1:7")
    assert r.exit_code == 1 and "not registered: 7" in r.stderr
    assert not zk_client.exists("/brokers/topics/u")

    # bad arguments are usage errors
    assert run(zk_chroot, "topics create --topic u").exit_code == 2
    assert (
        run(zk_chroot, "topics create --topic u --partitions 0 --replication-factor 1").exit_code
        == 2
    )
    assert run(zk_chroot, "topics create --topic u --replica-assignment zero").exit_code == 2
    r = run(zk_chroot, "topics create --topic u --replica-assignment 0:1,2,3")  # old form
    assert r.exit_code == 2 and "partition 1 ('2') has 1 replica(s)" in r.stderr
    assert "1:2,3:4 puts partition 0 on brokers 1,2" in r.stderr
    assert not zk_client.exists("/brokers/topics/u")
    r = run(zk_chroot, "topics create --topic bad/name --partitions 1 --replication-factor 1")
    assert r.exit_code == 1 and "illegal" in r.stderr


def test_delete_marks_the_topic(zk_client: KazooClient, zk_chroot: str) -> None:
    put(zk_client, "/brokers/topics/t", TopicAssignment.of({0: [1]}))
    r = run(zk_chroot, "topics delete --topic t")
    assert r.exit_code == 0 and "Topic t is marked for deletion." in r.stdout
    assert raw(zk_client, "/admin/delete_topics/t") == b""
    r = run(zk_chroot, "topics delete --topic t")
    assert r.exit_code == 0 and "already marked for deletion" in r.stdout
    r = run(zk_chroot, "topics delete --topic nope")
    assert r.exit_code == 1 and "Topic 'nope' does not exist" in r.stderr
    assert not zk_client.exists("/admin/delete_topics/nope")
    r = run(zk_chroot, "topics list")
    assert r.stdout == "t - marked for deletion\n"


def test_add_partitions_rewrites_the_topic_znode(zk_client: KazooClient, zk_chroot: str) -> None:
    register(zk_client, 1, 2, 3)
    put(zk_client, "/brokers/topics/t", TopicAssignment.of({0: [2, 3], 1: [3, 1]}))
    r = run(zk_chroot, "topics add-partitions --topic t --partitions 4")
    assert r.exit_code == 0, r.output
    # Kafka: start index = shift = index of partition 0's first replica (broker 2: 1); the
    # shift grows by one at partition 3 (3 % 3 == 0)
    assert raw(zk_client, "/brokers/topics/t") == (
        b'{"version":2,"partitions":{"0":[2,3],"1":[3,1],"2":[1,3],"3":[2,3]},'
        b'"adding_replicas":{},"removing_replicas":{}}'
    )
    r = run(zk_chroot, "topics add-partitions --topic t --partitions 3")
    assert r.exit_code == 1 and "can only be increased" in r.stderr
    r = run(zk_chroot, "topics add-partitions --topic t --partitions 5 --replica-assignment 3:2")
    assert r.exit_code == 0, r.output
    assert json.loads(raw(zk_client, "/brokers/topics/t"))["partitions"]["4"] == [3, 2]
    # every partition listed, as kafka-topics --alter takes it: the existing ones are skipped
    r = run(zk_chroot, "topics add-partitions --topic t --partitions 6 "
                       "--replica-assignment 2:3,3:1,1:3,2:3,3:2,1:2")
    assert r.exit_code == 0, r.output
    assert json.loads(raw(zk_client, "/brokers/topics/t"))["partitions"]["5"] == [1, 2]
    r = run(zk_chroot, "topics add-partitions --topic t --partitions 8 --replica-assignment 1:2")
    assert r.exit_code == 1 and "needs the 2 new one(s), or all 8" in r.stderr


def test_preferred_election_znode(zk_client: KazooClient, zk_chroot: str) -> None:
    put(zk_client, "/brokers/topics/t", TopicAssignment.of({0: [1], 1: [1], 2: [1]}))
    put(zk_client, "/brokers/topics/a", TopicAssignment.of({0: [1]}))
    r = run(zk_chroot, "elect-preferred --topic t --partition 2 --partition 0")
    assert r.exit_code == 0, r.output
    assert raw(zk_client, "/admin/preferred_replica_election") == (
        b'{"version":1,"partitions":[{"topic":"t","partition":0},{"topic":"t","partition":2}]}'
    )
    r = run(zk_chroot, "elect-preferred --all")
    assert r.exit_code == 1 and "in progress" in r.stderr
    zk_client.delete("/admin/preferred_replica_election")
    assert run(zk_chroot, "elect-preferred --all").exit_code == 0
    assert raw(zk_client, "/admin/preferred_replica_election") == (
        b'{"version":1,"partitions":[{"topic":"a","partition":0},{"topic":"t","partition":0},'
        b'{"topic":"t","partition":1},{"topic":"t","partition":2}]}'
    )
    zk_client.delete("/admin/preferred_replica_election")
    r = run(zk_chroot, "elect-preferred --topic t --partition 9")
    assert r.exit_code == 1 and "t-9 does not exist" in r.stderr
    assert run(zk_chroot, "elect-preferred").exit_code == 2


def plan_file(tmp_path: Path, entries: list[dict]) -> str:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps({"version": 1, "partitions": entries}))
    return str(path)


def test_reassign_writes_kafkas_znode_and_reports_status(
    zk_client: KazooClient, zk_chroot: str, tmp_path: Path
) -> None:
    register(zk_client, 1, 2, 3, 4)
    put(zk_client, "/brokers/topics/t", TopicAssignment.of({0: [1, 2], 1: [2, 3]}))
    plan = plan_file(
        tmp_path,
        [
            {"topic": "t", "partition": 0, "replicas": [3, 4]},
            {"topic": "t", "partition": 1, "replicas": [2, 3]},
        ],
    )
    r = run(zk_chroot, "reassign", "--plan", plan)
    assert r.exit_code == 0, r.output
    assert (
        '{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2],'
        '"log_dirs":["any","any"]}' in r.stdout
    )
    assert raw(zk_client, "/admin/reassign_partitions") == (
        b'{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[3,4]},'
        b'{"topic":"t","partition":1,"replicas":[2,3]}]}'
    )
    r = run(zk_chroot, "reassign", "--plan", plan)
    assert r.exit_code == 1 and "existing assignment running" in r.stderr

    r = run(zk_chroot, "reassign --status")
    assert r.exit_code == 0
    assert "t-0 is still in progress (replicas 1,2, target 3,4)" in r.stdout

    # the controller finished t-0 and dropped the znode; t-1 already had its target
    zk_client.delete("/admin/reassign_partitions")
    zk_client.set(
        "/brokers/topics/t", encode("/brokers/topics/t", TopicAssignment.of({0: [3, 4], 1: [2, 3]}))
    )
    r = run(zk_chroot, "reassign", "--status", "--plan", plan)
    assert r.exit_code == 0, r.output
    assert "Reassignment of partition t-0 completed successfully" in r.stdout
    assert "Reassignment of partition t-1 completed successfully" in r.stdout
    other = plan_file(tmp_path, [{"topic": "t", "partition": 0, "replicas": [1, 4]}])
    r = run(zk_chroot, "reassign", "--status", "--plan", other)
    assert r.exit_code == 1 and "t-0 failed (replicas 3,4, target 1,4)" in r.stdout
    assert run(zk_chroot, "reassign --status").stdout.startswith("No partition reassignment")


def test_reassign_refuses_an_unknown_broker(
    zk_client: KazooClient, zk_chroot: str, tmp_path: Path
) -> None:
    register(zk_client, 1, 2, 3)
    put(zk_client, "/brokers/topics/t", TopicAssignment.of({0: [1, 2]}))
    plan = plan_file(tmp_path, [{"topic": "t", "partition": 0, "replicas": [1, 42]}])
    r = run(zk_chroot, "reassign", "--plan", plan)
    assert r.exit_code == 1
    assert "non-existent brokerIDs: 42" in r.stderr
    assert not zk_client.exists("/admin/reassign_partitions")


def test_reassign_refusals(zk_client: KazooClient, zk_chroot: str, tmp_path: Path) -> None:
    register(zk_client, 1, 2)
    put(zk_client, "/brokers/topics/t", TopicAssignment.of({0: [1, 2]}))
    cases = {
        "nope": ([{"topic": "nope", "partition": 0, "replicas": [1]}], 1, "'nope' does not exist"),
        "partition": ([{"topic": "t", "partition": 5, "replicas": [1]}], 1, "t-5"),
        "dup": ([{"topic": "t", "partition": 0, "replicas": [1, 1]}], 2, "duplicate entries"),
        "empty": ([{"topic": "t", "partition": 0, "replicas": []}], 2, "empty replica list"),
        "none": ([], 2, "cannot be empty"),
    }
    for name, (entries, code, message) in cases.items():
        r = run(zk_chroot, "reassign", "--plan", plan_file(tmp_path, entries))
        assert r.exit_code == code, (name, r.output)
        assert message in r.stderr, (name, r.stderr)
        assert not zk_client.exists("/admin/reassign_partitions")
    assert run(zk_chroot, "reassign").exit_code == 2


def hand_built_cluster(client: KazooClient) -> None:
    register(client, 1, 2, 3)
    put(client, "/brokers/topics/t", TopicAssignment.of({0: [1, 2, 3], 1: [2, 3, 1]}))
    put(client, zk_paths.partition_state("t", 0), LeaderAndIsr(1, 3, (1, 2, 3), 5))
    put(client, zk_paths.partition_state("t", 1), LeaderAndIsr(-1, 7, (2,), 5))
    put(client, "/brokers/topics/gone", TopicAssignment.of({0: [3]}))
    put(client, zk_paths.partition_state("gone", 0), LeaderAndIsr(3, 0, (3,), 5))
    client.create("/admin/delete_topics/gone", b"", makepath=True)


def test_describe_prints_like_kafka_topics(zk_client: KazooClient, zk_chroot: str) -> None:
    hand_built_cluster(zk_client)
    r = run(zk_chroot, "topics describe")
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines() == [
        "Topic: gone\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: \tMarkedForDeletion: true",
        "\tTopic: gone\tPartition: 0\tLeader: 3\tReplicas: 3\tIsr: 3\tMarkedForDeletion: true",
        "Topic: t\tPartitionCount: 2\tReplicationFactor: 3\tConfigs: ",
        "\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2,3",
        "\tTopic: t\tPartition: 1\tLeader: none\tReplicas: 2,3,1\tIsr: 2",
    ]
    kafka_form = run(zk_chroot, "topics --describe --topic t")
    assert kafka_form.exit_code == 0 and kafka_form.stdout.splitlines() == r.stdout.splitlines()[2:]
    r = run(zk_chroot, "topics describe --topic t --under-replicated-partitions --verbose")
    assert r.stdout.splitlines() == [
        "\tTopic: t\tPartition: 1\tLeader: none\tReplicas: 2,3,1\tIsr: 2\tLeaderEpoch: 7",
    ]
    r = run(zk_chroot, "topics describe --topic nope")
    assert r.exit_code == 1 and "Topic 'nope' does not exist" in r.stderr


def test_every_command_needs_a_reachable_ensemble() -> None:
    for args in (["topics", "list"], ["audit"], ["elect-preferred", "--all"]):
        r = CliRunner().invoke(
            main, [*args, "--zookeeper", "127.0.0.1:1", "--connect-timeout", "1"]
        )
        assert r.exit_code == 1, r.output
        assert "could not connect to ZooKeeper at 127.0.0.1:1 within 1 s" in r.stderr
    r = CliRunner().invoke(main, ["topics", "list"], env={"KCONTROL_ZOOKEEPER": None})
    assert r.exit_code == 2 and "--zookeeper" in r.stderr
