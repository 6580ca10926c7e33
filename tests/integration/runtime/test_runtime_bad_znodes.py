"""Malformed data in every znode the controller reads, written while a real ControllerService is
active on the 3-server ensemble: malformed JSON, bytes that are not UTF-8, wrong types, huge
values, deep nesting, unknown versions, empty data. The controller logs an ERROR naming the
path, skips the bad item, and keeps serving everything else: a good topic created afterwards
still gets leaders, a broker change is still handled, good admin requests are still done.

The znodes (``fsm.zk_paths`` and the codecs of ``adapters.zookeeper.codec``): ``/controller``,
``/controller_epoch``, ``/brokers/ids/<id>``, ``/brokers/topics/<t>``, the partition state
znodes, ``/admin/delete_topics/<t>``, ``/admin/reassign_partitions``,
``/admin/preferred_replica_election``, ``/isr_change_notification/isr_change_<seq>``. kcontrol
reads no config znodes (``/config/...``), nor ``/cluster/id`` and ``/log_dir_event_notification``
in the controller."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable

import pytest
from kazoo.client import KazooClient
from runtime_helpers import controller_znode, wait_until

from adapters.controller import ControllerService
from adapters.network.broker_channels import LoggingChannels
from adapters.zookeeper import codec
from fsm import zk_paths as P
from fsm.values import LeaderAndIsr, TopicAssignment

pytestmark = pytest.mark.integration

HUGE = 2**63 + 1
DEEP = b"[" * 100_000 + b"]" * 100_000


def dumps(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


# shared bad data: not JSON, not UTF-8, deep, empty, not an object, a big blob
COMMON_BAD = {
    "truncated-json": b'{"version":1,"partitions":',
    "not-utf8": b"\xff\xfe\x00garbage",
    "empty": b"",
    "deep-nesting": DEEP,
    "array": b"[1,2,3]",
    "nan": b'{"version":NaN}',
    "duplicate-key": b'{"version":1,"version":1}',
    "big-blob": b'{"version":1,"pad":"' + b"x" * 700_000 + b'"}',
}
TOPIC_BAD = {
    **COMMON_BAD,
    "unknown-version": dumps({"version": 3, "partitions": {"0": [1, 2]}}),
    "version-string": dumps({"version": "1", "partitions": {"0": [1, 2]}}),
    "partitions-array": dumps({"version": 1, "partitions": [[1, 2]]}),
    "replicas-string": dumps({"version": 1, "partitions": {"0": "1,2"}}),
    "replica-huge": dumps({"version": 1, "partitions": {"0": [1, HUGE]}}),
    "replica-negative": dumps({"version": 1, "partitions": {"0": [-1, 2]}}),
    "replica-twice": dumps({"version": 1, "partitions": {"0": [1, 1]}}),
    "replica-bool": dumps({"version": 1, "partitions": {"0": [True, 2]}}),
    "partition-key-huge": dumps({"version": 1, "partitions": {str(HUGE): [1, 2]}}),
    "partition-key-text": dumps({"version": 1, "partitions": {"zero": [1, 2]}}),
    "no-replicas": dumps({"version": 1, "partitions": {"0": []}}),
    "adding-stray": dumps({"version": 2, "partitions": {"0": [1, 2]},
                           "adding_replicas": {"7": [1]}, "removing_replicas": {}}),
}
BROKER_BAD = {
    **COMMON_BAD,
    "unknown-version": dumps({"version": 99, "host": "h", "port": 1, "endpoints": [],
                              "listener_security_protocol_map": {}, "timestamp": "1"}),
    "endpoints-string": dumps({"version": 4, "host": "h", "port": 1,
                               "endpoints": "PLAINTEXT://h:1", "timestamp": "1",
                               "listener_security_protocol_map": {"PLAINTEXT": "PLAINTEXT"}}),
    "port-huge": dumps({"version": 4, "host": "h", "port": HUGE, "rack": None,
                        "endpoints": ["PLAINTEXT://h:1"], "timestamp": "1",
                        "listener_security_protocol_map": {"PLAINTEXT": "PLAINTEXT"}}),
    "timestamp-number": dumps({"version": 4, "host": "h", "port": 1, "rack": None,
                               "endpoints": ["PLAINTEXT://h:1"], "timestamp": 1,
                               "listener_security_protocol_map": {"PLAINTEXT": "PLAINTEXT"}}),
}
STATE_BAD = {
    **COMMON_BAD,
    "unknown-version": dumps({"version": 2, "leader": 1, "leader_epoch": 0,
                              "controller_epoch": 1, "isr": [1]}),
    "leader-string": dumps({"version": 1, "leader": "1", "leader_epoch": 0,
                            "controller_epoch": 1, "isr": [1]}),
    "epoch-huge": dumps({"version": 1, "leader": 1, "leader_epoch": HUGE,
                         "controller_epoch": 1, "isr": [1]}),
    "isr-null": dumps({"version": 1, "leader": 1, "leader_epoch": 0, "controller_epoch": 1,
                       "isr": None}),
}
PARTITIONS_BAD = {  # reassignment, preferred election, ISR change notification
    **COMMON_BAD,
    "unknown-version": dumps({"version": 2, "partitions": [{"topic": "good", "partition": 0}]}),
    "partitions-object": dumps({"version": 1, "partitions": {"good": 0}}),
    "partition-huge": dumps({"version": 1, "partitions": [{"topic": "good", "partition": HUGE}]}),
    "partition-negative": dumps({"version": 1, "partitions": [{"topic": "good",
                                                               "partition": -1}]}),
    "topic-illegal": dumps({"version": 1, "partitions": [{"topic": "no/slash", "partition": 0}]}),
    "topic-number": dumps({"version": 1, "partitions": [{"topic": 7, "partition": 0}]}),
    "listed-twice": dumps({"version": 1, "partitions": [{"topic": "good", "partition": 0},
                                                        {"topic": "good", "partition": 0}]}),
}
REASSIGN_BAD = {
    **PARTITIONS_BAD,
    "replicas-missing": dumps({"version": 1, "partitions": [{"topic": "good", "partition": 0}]}),
    "replicas-huge": dumps({"version": 1, "partitions": [{"topic": "good", "partition": 0,
                                                          "replicas": [1, HUGE]}]}),
    "replicas-empty": dumps({"version": 1, "partitions": [{"topic": "good", "partition": 0,
                                                           "replicas": []}]}),
}


# ---------------------------------------------------------------- helpers


def errors_naming(caplog: pytest.LogCaptureFixture, path: str) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.levelno >= logging.ERROR and path in r.getMessage()]


def no_tracebacks(caplog: pytest.LogCaptureFixture) -> None:
    """Bad input is reported in one line; nothing raised through the event thread."""
    failed = [r.getMessage() for r in caplog.records if r.exc_info is not None]
    assert not failed, failed[:3]


def create_topic(client: KazooClient, name: str, assignment: dict[int, list[int]]) -> None:
    path = P.topic(name)
    client.create(path, codec.encode(path, TopicAssignment.of(assignment)), makepath=True)


def state(client: KazooClient, topic: str, p: int) -> LeaderAndIsr | None:
    path = P.partition_state(topic, p)
    if client.exists(path) is None:
        return None
    try:
        return codec.decode(path, client.get(path)[0])
    except codec.ZnodeDecodeError:
        return None


def shrink_isr(client: KazooClient, topic: str, p: int) -> None:
    """What a leader does when a follower falls behind: its ISR becomes the leader alone (a
    conditional write that bumps the state znode's version)."""
    path = P.partition_state(topic, p)
    data, stat = client.get(path)
    li = codec.decode(path, data)
    client.set(path, codec.encode(path, LeaderAndIsr(li.leader, li.leader_epoch, (li.leader,),
                                                      li.controller_epoch)), stat.version)


def has_leaders(client: KazooClient, topic: str, partitions: int) -> bool:
    return all(state(client, topic, p) is not None for p in range(partitions))


def controller_with_brokers(make_service: Callable[..., ControllerService],
                            make_broker: Callable[[int], object], brokers: tuple[int, ...] = (1, 2)
                            ) -> ControllerService:
    for b in brokers:
        make_broker(b)
    svc = make_service(1)
    wait_until(lambda: svc.is_active, 30, "the controller elected")
    assert svc.wait_idle(15)
    return svc


def still_serving(svc: ControllerService, client: KazooClient, topic: str,
                  assignment: dict[int, list[int]] | None = None) -> None:
    """A good topic created now gets its leaders, and the controller is still the same."""
    epoch = svc.epoch
    assignment = assignment or {0: [1, 2], 1: [2, 1]}
    create_topic(client, topic, assignment)
    wait_until(lambda: has_leaders(client, topic, len(assignment)), 30, f"leaders of {topic}")
    for p, replicas in assignment.items():
        li = state(client, topic, p)
        assert li is not None and li.leader == replicas[0], (p, li)
    assert svc.is_active and svc.epoch == epoch


def requests(svc: ControllerService, api: str) -> list[tuple[int, object]]:
    channels = svc.channels
    assert isinstance(channels, LoggingChannels)
    return channels.requests(api)


# ---------------------------------------------------------------- topics


def test_bad_topic_znodes_are_skipped(make_service, make_broker, zk_client: KazooClient,
                                      caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    zk_client.create(P.topic("bad-before-start"), TOPIC_BAD["replica-huge"], makepath=True)
    svc = controller_with_brokers(make_service, make_broker)
    assert errors_naming(caplog, P.topic("bad-before-start"))  # skipped by the failover load
    for name, data in TOPIC_BAD.items():
        zk_client.create(P.topic(f"bad-{name}"), data)
    for name in TOPIC_BAD:
        wait_until(lambda n=name: errors_naming(caplog, P.topic(f"bad-{n}")), 30,
                   f"an error naming /brokers/topics/bad-{name}")
    assert svc.wait_idle(15)
    assert not any(t.startswith("bad-") for t in svc.controller.topic_names())
    for name in TOPIC_BAD:
        assert zk_client.exists(P.partitions(f"bad-{name}")) is None, name
    still_serving(svc, zk_client, "good")
    # a topic znode corrupted after it was created: its expansion is skipped, it keeps serving
    zk_client.set(P.topic("good"), TOPIC_BAD["replicas-string"])
    wait_until(lambda: len(errors_naming(caplog, P.topic("good"))) >= 1, 30,
               "an error naming /brokers/topics/good")
    assert "good" in svc.controller.topic_names()
    still_serving(svc, zk_client, "good2")
    no_tracebacks(caplog)


# ---------------------------------------------------------------- brokers


def test_bad_broker_registrations_are_skipped(make_service, make_broker, zk_client: KazooClient,
                                              caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    svc = controller_with_brokers(make_service, make_broker)
    bad_ids = {}
    for i, (name, data) in enumerate(BROKER_BAD.items()):
        bad_ids[name] = 100 + i
        zk_client.create(P.broker(100 + i), data, ephemeral=True)
    zk_client.create(P.BROKER_IDS + "/not-a-number", b"{}", ephemeral=True)
    for name, b in bad_ids.items():
        wait_until(lambda b=b: errors_naming(caplog, P.broker(b)), 30,
                   f"an error naming /brokers/ids/{b} ({name})")
    wait_until(lambda: errors_naming(caplog, P.BROKER_IDS + "/not-a-number"), 30,
               "an error naming /brokers/ids/not-a-number")
    assert svc.wait_idle(15)
    assert set(svc.controller.live_brokers()) == {1, 2}
    # a broker change is still handled: broker 3 joins and leads a new topic's partition
    make_broker(3)
    wait_until(lambda: 3 in svc.controller.live_brokers(), 30, "broker 3 seen")
    still_serving(svc, zk_client, "good", {0: [3, 1], 1: [1, 3]})
    no_tracebacks(caplog)


# ---------------------------------------------------------------- partition states


def test_bad_partition_states_are_skipped(make_service, make_broker, zk_client: KazooClient,
                                          caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    svc = controller_with_brokers(make_service, make_broker)
    names = list(STATE_BAD)
    create_topic(zk_client, "states", {p: [1, 2] for p in range(len(names) + 1)})
    wait_until(lambda: has_leaders(zk_client, "states", len(names) + 1), 30, "leaders")
    assert svc.wait_idle(15)
    for p, name in enumerate(names, start=1):  # partition 0 stays good
        zk_client.set(P.partition_state("states", p), STATE_BAD[name])
    # the leader of partition 0 shrinks its ISR and announces an ISR change of every partition:
    # the controller reads their states
    shrink_isr(zk_client, "states", 0)
    sent = len(requests(svc, "UpdateMetadata"))
    note = dumps({"version": 1, "partitions": [{"topic": "states", "partition": p}
                                               for p in range(len(names) + 1)]})
    zk_client.create(P.isr_change(P.ISR_CHANGE_PREFIX), note, sequence=True)
    for p, name in enumerate(names, start=1):
        wait_until(lambda p=p: errors_naming(caplog, P.partition_state("states", p)), 30,
                   f"an error naming the state of states-{p} ({name})")
    wait_until(lambda: len(requests(svc, "UpdateMetadata")) > sent, 30,
               "UpdateMetadata for the good partition")
    wait_until(lambda: not zk_client.get_children(P.ISR_CHANGE_NOTIFICATION), 30,
               "the notification deleted")
    still_serving(svc, zk_client, "good")
    # a failover loads every state: the bad ones are skipped again, the rest is served
    caplog.clear()
    svc.stop()
    svc2 = make_service(2)
    wait_until(lambda: svc2.is_active, 30, "a new controller elected")
    assert svc2.wait_idle(15)
    for p in range(1, len(names) + 1):
        assert errors_naming(caplog, P.partition_state("states", p)), p
    assert svc2.controller.leader_and_isr(("states", 0)) is not None
    still_serving(svc2, zk_client, "good-after-failover")
    no_tracebacks(caplog)


# ---------------------------------------------------------------- admin requests


def test_bad_reassignments_are_skipped(make_service, make_broker, zk_client: KazooClient,
                                       caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    svc = controller_with_brokers(make_service, make_broker, (1, 2, 3))
    create_topic(zk_client, "good", {0: [1, 2]})
    wait_until(lambda: has_leaders(zk_client, "good", 1), 30, "leaders")
    for name, data in REASSIGN_BAD.items():
        caplog.clear()
        zk_client.create(P.REASSIGN_PARTITIONS, data, makepath=True)
        wait_until(lambda: errors_naming(caplog, P.REASSIGN_PARTITIONS), 30,
                   f"an error naming /admin/reassign_partitions ({name})")
        assert svc.wait_idle(15)
        assert svc.controller.reassignments() == {}
        assert zk_client.exists(P.REASSIGN_PARTITIONS) is not None  # left for an operator
        zk_client.delete(P.REASSIGN_PARTITIONS)
    # a good one is still done: good-0 moves to [2, 3]
    zk_client.create(P.REASSIGN_PARTITIONS, dumps({"version": 1, "partitions": [
        {"topic": "good", "partition": 0, "replicas": [2, 3]}]}))
    wait_until(lambda: svc.controller.reassignments() or
               svc.controller.replicas(("good", 0)) == (2, 3), 30, "the reassignment started")
    still_serving(svc, zk_client, "good2")
    no_tracebacks(caplog)


def test_bad_preferred_elections_are_skipped(make_service, make_broker, zk_client: KazooClient,
                                             caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    svc = controller_with_brokers(make_service, make_broker)
    create_topic(zk_client, "good", {0: [1, 2]})
    wait_until(lambda: has_leaders(zk_client, "good", 1), 30, "leaders")
    for name, data in PARTITIONS_BAD.items():
        caplog.clear()
        zk_client.create(P.PREFERRED_REPLICA_ELECTION, data, makepath=True)
        wait_until(lambda: errors_naming(caplog, P.PREFERRED_REPLICA_ELECTION), 30,
                   f"an error naming /admin/preferred_replica_election ({name})")
        assert svc.wait_idle(15)
        assert zk_client.exists(P.PREFERRED_REPLICA_ELECTION) is not None  # left as it is
        zk_client.delete(P.PREFERRED_REPLICA_ELECTION)
    # a good one is still handled (and removed)
    zk_client.create(P.PREFERRED_REPLICA_ELECTION, dumps({"version": 1, "partitions": [
        {"topic": "good", "partition": 0}]}))
    wait_until(lambda: zk_client.exists(P.PREFERRED_REPLICA_ELECTION) is None, 30,
               "the good election request handled and removed")
    still_serving(svc, zk_client, "good2")
    no_tracebacks(caplog)


def test_bad_isr_change_notifications_are_deleted(make_service, make_broker,
                                                  zk_client: KazooClient,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    svc = controller_with_brokers(make_service, make_broker)
    create_topic(zk_client, "good", {0: [1, 2]})
    wait_until(lambda: has_leaders(zk_client, "good", 1), 30, "leaders")
    created = []
    for data in PARTITIONS_BAD.values():
        path = zk_client.create(P.isr_change(P.ISR_CHANGE_PREFIX), data, sequence=True)
        created.append(path)
    for path in created:
        wait_until(lambda path=path: errors_naming(caplog, path), 30, f"an error naming {path}")
    # Kafka deletes notifications it cannot read, so they do not pile up
    wait_until(lambda: not zk_client.get_children(P.ISR_CHANGE_NOTIFICATION), 30,
               "the bad notifications deleted")
    shrink_isr(zk_client, "good", 0)
    sent = len(requests(svc, "UpdateMetadata"))
    zk_client.create(P.isr_change(P.ISR_CHANGE_PREFIX), dumps(
        {"version": 1, "partitions": [{"topic": "good", "partition": 0}]}), sequence=True)
    wait_until(lambda: len(requests(svc, "UpdateMetadata")) > sent, 30,
               "UpdateMetadata after a good notification")
    still_serving(svc, zk_client, "good2")
    no_tracebacks(caplog)


def test_bad_topic_deletion_markers(make_service, make_broker, zk_client: KazooClient,
                                    caplog: pytest.LogCaptureFixture) -> None:
    """``/admin/delete_topics/<t>`` holds no data Kafka reads: garbage there changes nothing; a
    marker for a topic that does not exist, or whose name is not a topic name, is dropped."""
    caplog.set_level(logging.INFO)
    svc = controller_with_brokers(make_service, make_broker)
    create_topic(zk_client, "doomed", {0: [1, 2]})
    wait_until(lambda: has_leaders(zk_client, "doomed", 1), 30, "leaders")
    zk_client.create(P.delete_topic("no-such-topic"), DEEP, makepath=True)
    zk_client.create(P.delete_topic("not a topic name"), b"\xff")
    zk_client.create(P.delete_topic("doomed"), COMMON_BAD["big-blob"])
    wait_until(lambda: any(getattr(r, "delete_partitions", False)
                           for _, r in requests(svc, "StopReplica")), 30,
               "the deletion of 'doomed' started")
    wait_until(lambda: set(zk_client.get_children(P.DELETE_TOPICS)) <= {"doomed"}, 30,
               "the markers of topics that do not exist dropped")
    for name in ("no-such-topic", "not a topic name"):  # named in the state-change log
        assert any(name in r.getMessage() and "unknown topic" in r.getMessage()
                   for r in caplog.records if r.name == "kcontrol.state.change"), name
    still_serving(svc, zk_client, "good")
    no_tracebacks(caplog)


# ---------------------------------------------------------------- /controller, /controller_epoch


def test_bad_controller_znode(make_service, make_broker, zk_client: KazooClient,
                              caplog: pytest.LogCaptureFixture) -> None:
    """Garbage written over the active controller's own ``/controller``: it cannot tell who
    the controller is any more; it resigns, removes the znode it owns, and an election
    follows (with a higher epoch). A good topic then still gets leaders."""
    caplog.set_level(logging.INFO)
    svc = controller_with_brokers(make_service, make_broker)
    epoch = svc.epoch
    zk_client.set(P.CONTROLLER, COMMON_BAD["deep-nesting"])
    wait_until(lambda: errors_naming(caplog, P.CONTROLLER + ":"), 30, "an error naming /controller")
    wait_until(lambda: svc.is_active and svc.epoch > epoch, 30, "re-elected with a new epoch")
    assert controller_znode(zk_client)[:2] == (1, svc.epoch)
    still_serving(svc, zk_client, "good")
    no_tracebacks(caplog)


@pytest.mark.parametrize("name", ["truncated-json", "empty", "not-a-number", "negative",
                                  "huge"])
def test_bad_controller_epoch(name: str, make_service, make_broker, zk_client: KazooClient,
                              caplog: pytest.LogCaptureFixture) -> None:
    """Garbage over ``/controller_epoch``: its version moved, so the active controller's next
    write is fenced and it resigns; the epoch read back cannot be trusted, so no controller is
    elected on it (an epoch going backwards would be refused by every broker) until an operator
    writes a good epoch -- then the election goes on above it."""
    caplog.set_level(logging.INFO)
    bad = {"truncated-json": b'{"', "empty": b"", "not-a-number": b"five", "negative": b"-3",
           "huge": str(HUGE).encode()}[name]
    svc = controller_with_brokers(make_service, make_broker)
    epoch = svc.epoch
    zk_client.set(P.CONTROLLER_EPOCH, bad)
    create_topic(zk_client, "after", {0: [1, 2]})  # makes the controller write: fenced
    wait_until(lambda: errors_naming(caplog, P.CONTROLLER_EPOCH), 30,
               "an error naming /controller_epoch")
    wait_until(lambda: svc.wait_idle(1), 30, "the controller idle")
    # nobody was elected on the garbage (an epoch read as 0 would go backwards)
    assert not svc.is_active and svc.resignations
    assert zk_client.get(P.CONTROLLER_EPOCH)[0] == bad
    assert zk_client.exists(P.CONTROLLER) is None
    # an operator repairs the epoch (above the last one): the election goes on
    zk_client.set(P.CONTROLLER_EPOCH, str(epoch + 5).encode())
    wait_until(lambda: svc.is_active and svc.epoch > epoch + 5, 30, "elected above the repair")
    wait_until(lambda: has_leaders(zk_client, "after", 1), 30, "leaders of 'after'")
    still_serving(svc, zk_client, "good")
    no_tracebacks(caplog)
