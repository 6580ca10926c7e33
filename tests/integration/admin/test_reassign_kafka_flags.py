"""``kcontrol reassign`` with kafka-reassign-partitions.sh's flags against the real ensemble:
``--generate`` proposes, ``--execute`` writes Kafka's znode, ``--verify`` reports each partition
and exits 1 until all completed (the controller's part is played by hand, as in
``test_admin_commands``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from adapters.zookeeper.codec import encode
from fsm.values import TopicAssignment
from tests.integration.admin.test_admin_commands import put, raw, register, run

pytestmark = pytest.mark.integration


def write(tmp_path: Path, name: str, obj: object) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(obj))
    return str(path)


def test_generate_execute_verify(zk_client: KazooClient, zk_chroot: str, tmp_path: Path) -> None:
    register(zk_client, 1, 2, 3, 4)
    put(zk_client, "/brokers/topics/t", TopicAssignment.of({0: [1, 2], 1: [2, 3]}))
    topics = write(tmp_path, "topics.json", {"version": 1, "topics": [{"topic": "t"}]})

    r = run(zk_chroot, "reassign --generate --broker-list 3,4 --topics-to-move-json-file", topics)
    assert r.exit_code == 0, r.output
    current = (
        '{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2],'
        '"log_dirs":["any","any"]},{"topic":"t","partition":1,"replicas":[2,3],'
        '"log_dirs":["any","any"]}]}'
    )
    proposed = (
        '{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[3,4],'
        '"log_dirs":["any","any"]},{"topic":"t","partition":1,"replicas":[4,3],'
        '"log_dirs":["any","any"]}]}'
    )
    assert r.stdout.splitlines() == [
        "Current partition replica assignment", current, "",
        "Proposed partition reassignment configuration", proposed,
    ]
    plan = tmp_path / "plan.json"
    plan.write_text(proposed)

    r = run(zk_chroot, "reassign --execute --reassignment-json-file", str(plan))
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines() == [
        "Current partition replica assignment", "", current, "",
        "Save this to use as the --reassignment-json-file option during rollback",
        "Successfully started reassignment of partitions.",
    ]
    assert raw(zk_client, "/admin/reassign_partitions") == (
        b'{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[3,4]},'
        b'{"topic":"t","partition":1,"replicas":[4,3]}]}'
    )

    r = run(zk_chroot, "reassign --verify --reassignment-json-file", str(plan))
    assert r.exit_code == 1, r.output
    assert r.stdout.splitlines() == [
        "Status of partition reassignment: ",
        "Reassignment of partition t-0 is still in progress",
        "Reassignment of partition t-1 is still in progress",
    ]

    # the controller finished t-0 and t-1 went elsewhere; then the znode is gone
    zk_client.delete("/admin/reassign_partitions")
    done = TopicAssignment.of({0: [3, 4], 1: [4, 1]})
    zk_client.set("/brokers/topics/t", encode("/brokers/topics/t", done))
    r = run(zk_chroot, "reassign --verify --reassignment-json-file", str(plan))
    assert r.exit_code == 1, r.output
    assert r.stdout.splitlines()[1:] == [
        "Reassignment of partition t-0 completed successfully",
        "Reassignment of partition t-1 failed",
    ]
    done = TopicAssignment.of({0: [3, 4], 1: [4, 3]})
    zk_client.set("/brokers/topics/t", encode("/brokers/topics/t", done))
    r = run(zk_chroot, "reassign --verify --reassignment-json-file", str(plan))
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[1:] == [
        "Reassignment of partition t-0 completed successfully",
        "Reassignment of partition t-1 completed successfully",
    ]


def test_generate_refusals(zk_client: KazooClient, zk_chroot: str, tmp_path: Path) -> None:
    register(zk_client, 1, 2)
    put(zk_client, "/brokers/topics/t", TopicAssignment.of({0: [1, 2]}))
    topics = write(tmp_path, "topics.json", {"version": 1, "topics": [{"topic": "t"}]})
    nope = write(tmp_path, "nope.json", {"version": 1, "topics": [{"topic": "nope"}]})
    cases = {
        (topics, "1,7"): "not registered: 7",
        (topics, "1"): "Replication factor: 2 larger than available brokers: 1",
        (nope, "1,2"): "Topic 'nope' does not exist",
    }
    for (path, brokers), message in cases.items():
        r = run(zk_chroot, "reassign --generate --topics-to-move-json-file", path,
                "--broker-list", brokers)
        assert r.exit_code == 1 and message in r.stderr, (message, r.output)
