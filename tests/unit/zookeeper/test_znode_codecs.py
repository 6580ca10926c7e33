"""Kafka's znode JSON: round trips for every kind, byte-exact reference examples, malformed input.

(Named ``test_znode_codecs`` rather than ``test_codecs`` so it cannot collide with the network
adapter's wire-codec tests under pytest's rootdir-based module names.)
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapters.zookeeper import codec
from adapters.zookeeper.codec import ClusterIdZnode, LogDirEventZnode, decode, encode
from adapters.zookeeper.codec.errors import ZnodeDecodeError, ZnodeEncodeError
from fsm import zk_paths
from fsm.values import Endpoint, LeaderAndIsr, TopicAssignment
from fsm.znodes import (
    BrokerRegistration,
    ControllerEpochZnode,
    ControllerZnode,
    EmptyZnode,
    IsrChangeZnode,
    PreferredElectionZnode,
    ReassignmentZnode,
)

INT32 = 2**31 - 1
STATE = zk_paths.partition_state("t", 0)
TOPIC = zk_paths.topic("t")

# ------------------------------------------------------------------ strategies

ids = st.integers(0, INT32)
epochs = st.integers(0, INT32)
timestamps = st.integers(0, 2**63 - 1)
topics = st.from_regex(r"[a-zA-Z0-9._-]{1,30}", fullmatch=True).filter(
    lambda t: t not in (".", "..")
)
replica_lists = st.lists(ids, min_size=1, max_size=6, unique=True).map(tuple)
partitions = st.lists(st.tuples(topics, ids), unique=True, max_size=8).map(tuple)
listeners = st.from_regex(r"[A-Z][A-Z0-9_]{0,11}", fullmatch=True)
hosts = st.one_of(
    st.from_regex(r"[a-z0-9][a-z0-9.-]{0,20}", fullmatch=True),
    st.sampled_from(["", "::1", "fe80::1%eth0", "10.0.0.1"]),
)
protocols = st.sampled_from(codec.SECURITY_PROTOCOLS)


@st.composite
def endpoint_lists(draw: st.DrawFn) -> tuple[Endpoint, ...]:
    names = draw(st.lists(listeners, unique=True, max_size=4))
    return tuple(
        Endpoint(n, draw(hosts), draw(st.integers(0, 65535)), draw(protocols)) for n in names
    )


@st.composite
def topic_assignments(draw: st.DrawFn) -> TopicAssignment:
    parts = draw(st.dictionaries(ids, replica_lists, min_size=1, max_size=8))
    keys = sorted(parts)
    adding = draw(st.dictionaries(st.sampled_from(keys), replica_lists, max_size=3))
    removing = draw(st.dictionaries(st.sampled_from(keys), replica_lists, max_size=3))
    return TopicAssignment(
        tuple(sorted(parts.items())), tuple(sorted(adding.items())), tuple(sorted(removing.items()))
    )


seqs = st.integers(0, 9_999_999_999).map(lambda n: f"{n:010d}")

CASES = {
    "controller": st.builds(
        lambda b, t: (zk_paths.CONTROLLER, ControllerZnode(b, t)), ids, timestamps
    ),
    "controller_epoch": st.builds(
        lambda e: (zk_paths.CONTROLLER_EPOCH, ControllerEpochZnode(e)), epochs
    ),
    "broker": st.builds(
        lambda b, eps, rack, ts: (zk_paths.broker(b), BrokerRegistration(b, eps, rack, ts)),
        ids,
        endpoint_lists(),
        st.none() | st.text(max_size=10),
        timestamps,
    ),
    "topic": st.builds(lambda t, a: (zk_paths.topic(t), a), topics, topic_assignments()),
    "partition_state": st.builds(
        lambda t, p, leader, le, isr, ce: (
            zk_paths.partition_state(t, p),
            LeaderAndIsr(leader, le, isr, ce),
        ),
        topics,
        ids,
        st.integers(-1, INT32),
        epochs,
        st.lists(ids, unique=True, max_size=5).map(tuple),
        epochs,
    ),
    "reassignment": st.builds(
        lambda tps, reps: (
            zk_paths.REASSIGN_PARTITIONS,
            ReassignmentZnode(tuple(zip(tps, reps, strict=False))),
        ),
        partitions,
        st.lists(replica_lists, min_size=8, max_size=8),
    ),
    "preferred": st.builds(
        lambda tps: (zk_paths.PREFERRED_REPLICA_ELECTION, PreferredElectionZnode(tps)), partitions
    ),
    "isr_change": st.builds(
        lambda s, tps: (zk_paths.isr_change("isr_change_" + s), IsrChangeZnode(tps)),
        seqs,
        partitions,
    ),
    "log_dir_event": st.builds(
        lambda s, b: (f"/log_dir_event_notification/log_dir_event_{s}", LogDirEventZnode(b)),
        seqs,
        ids,
    ),
    "cluster_id": st.builds(
        lambda i: (zk_paths.CLUSTER_ID, ClusterIdZnode(i)), st.text(min_size=1, max_size=30)
    ),
    "delete_topic": st.builds(lambda t: (zk_paths.delete_topic(t), EmptyZnode()), topics),
}


# ------------------------------------------------------------------ round trips


@pytest.mark.parametrize("kind", sorted(CASES))
@given(data=st.data())
def test_round_trip(kind: str, data: st.DataObject) -> None:
    path, value = data.draw(CASES[kind])
    raw = encode(path, value)
    assert isinstance(raw, bytes)
    assert decode(path, raw) == value
    assert encode(path, decode(path, raw)) == raw  # encoding is canonical


@given(topic_assignments())
def test_topic_v1_reads_as_assignment_without_moves(a: TopicAssignment) -> None:
    v1 = json.dumps({"version": 1, "partitions": {str(p): list(r) for p, r in a.partitions}})
    assert decode(TOPIC, v1.encode()) == TopicAssignment(a.partitions)


# ------------------------------------------------------------------ Kafka's exact bytes

REFERENCE_BROKER = (
    b'{"version":4,"host":"h","port":9092,"jmx_port":-1,"timestamp":"1535000000000",'
    b'"endpoints":["CONTROLLER://h:9093","PLAINTEXT://h:9092"],"rack":null,'
    b'"listener_security_protocol_map":{"CONTROLLER":"PLAINTEXT","PLAINTEXT":"PLAINTEXT"}}'
)

EXACT = [
    (
        zk_paths.CONTROLLER,
        ControllerZnode(1, 1535000000000),
        b'{"version":1,"brokerid":1,"timestamp":"1535000000000"}',
    ),
    (zk_paths.CONTROLLER_EPOCH, ControllerEpochZnode(5), b"5"),
    (zk_paths.CONTROLLER_EPOCH, ControllerEpochZnode(0), b"0"),
    (
        zk_paths.broker(1),
        BrokerRegistration(
            1,
            (Endpoint("CONTROLLER", "h", 9093), Endpoint("PLAINTEXT", "h", 9092)),
            None,
            1535000000000,
        ),
        REFERENCE_BROKER,
    ),
    (
        zk_paths.broker(2),
        BrokerRegistration(2, (Endpoint("SSL", "h", 9093, "SSL"),), "r1", 7),
        b'{"version":4,"host":null,"port":-1,"jmx_port":-1,"timestamp":"7","endpoints":'
        b'["SSL://h:9093"],"rack":"r1","listener_security_protocol_map":{"SSL":"SSL"}}',
    ),
    (
        zk_paths.broker(3),
        BrokerRegistration(3, (Endpoint("INTERNAL", "::1", 9092),), None, 0),
        b'{"version":4,"host":"::1","port":9092,"jmx_port":-1,"timestamp":"0","endpoints":'
        b'["INTERNAL://[::1]:9092"],"rack":null,"listener_security_protocol_map":'
        b'{"INTERNAL":"PLAINTEXT"}}',
    ),
    (
        TOPIC,
        TopicAssignment.of({0: [1, 2, 3], 1: [2, 3, 1]}),
        b'{"version":2,"partitions":{"0":[1,2,3],"1":[2,3,1]},"adding_replicas":{},'
        b'"removing_replicas":{}}',
    ),
    (
        TOPIC,
        TopicAssignment(((0, (1, 2, 3, 4)), (1, (2, 3, 1))), ((0, (4,)),), ((0, (1,)),)),
        b'{"version":2,"partitions":{"0":[1,2,3,4],"1":[2,3,1]},"adding_replicas":{"0":[4]},'
        b'"removing_replicas":{"0":[1]}}',
    ),
    (
        TOPIC,
        TopicAssignment.of({2: [1], 10: [1]}),  # numeric order, not "10" < "2"
        b'{"version":2,"partitions":{"2":[1],"10":[1]},"adding_replicas":{},"removing_replicas":{}}',
    ),
    (
        STATE,
        LeaderAndIsr(1, 3, (1, 2), 5),
        b'{"version":1,"leader":1,"leader_epoch":3,"controller_epoch":5,"isr":[1,2]}',
    ),
    (
        STATE,
        LeaderAndIsr(-1, 4, (2,), 5),
        b'{"version":1,"leader":-1,"leader_epoch":4,"controller_epoch":5,"isr":[2]}',
    ),
    (zk_paths.delete_topic("t"), EmptyZnode(), b""),
    (
        zk_paths.REASSIGN_PARTITIONS,
        ReassignmentZnode(((("t", 0), (1, 2, 3)),)),
        b'{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2,3]}]}',
    ),
    (
        zk_paths.PREFERRED_REPLICA_ELECTION,
        PreferredElectionZnode((("t", 0),)),
        b'{"version":1,"partitions":[{"topic":"t","partition":0}]}',
    ),
    (
        zk_paths.isr_change("isr_change_0000000007"),
        IsrChangeZnode((("t", 0), ("u", 3))),
        b'{"version":1,"partitions":[{"topic":"t","partition":0},{"topic":"u","partition":3}]}',
    ),
    (
        "/log_dir_event_notification/log_dir_event_0000000000",
        LogDirEventZnode(1),
        b'{"version":1,"broker":1,"event":1}',
    ),
    (
        zk_paths.CLUSTER_ID,
        ClusterIdZnode("5Z3OyJcKRmW2ZbqZl0Wq9A"),
        b'{"version":"1","id":"5Z3OyJcKRmW2ZbqZl0Wq9A"}',
    ),
]


@pytest.mark.parametrize(
    ("path", "value", "raw"), EXACT, ids=[f"{p}#{i}" for i, (p, _, _) in enumerate(EXACT)]
)
def test_kafka_bytes(path: str, value: object, raw: bytes) -> None:
    assert encode(path, value) == raw  # type: ignore[arg-type]
    assert decode(path, raw) == value


READ_ONLY = [  # forms Kafka writes that kcontrol reads but writes differently
    (
        TOPIC,
        b'{"version":1,"partitions":{"0":[1,2,3],"1":[2,3,1]}}',
        TopicAssignment.of({0: [1, 2, 3], 1: [2, 3, 1]}),
    ),
    (
        TOPIC,
        b'{"partitions":{"1":[2]},"version":2,"removing_replicas":{},"adding_replicas":{}}',
        TopicAssignment.of({1: [2]}),
    ),
    (
        zk_paths.broker(1),
        REFERENCE_BROKER.replace(b'"version":4', b'"version":5').replace(
            b"}}", b'},"features":{}}'
        ),
        decode(zk_paths.broker(1), REFERENCE_BROKER),
    ),
    (zk_paths.CONTROLLER_EPOCH, b"007", ControllerEpochZnode(7)),
    (zk_paths.delete_topic("t"), None, EmptyZnode()),
    (zk_paths.BROKER_SEQID, b"", EmptyZnode()),
    (zk_paths.partition("t", 0), None, EmptyZnode()),
    (zk_paths.REASSIGN_PARTITIONS, b'{"version":1,"partitions":[]}', ReassignmentZnode(())),
    (
        zk_paths.REASSIGN_PARTITIONS,
        b'{"version":1,"partitions":[{"topic":"t","partition":0,'
        b'"replicas":[3],"log_dirs":["any"]}]}',
        ReassignmentZnode(((("t", 0), (3,)),)),
    ),
]


@pytest.mark.parametrize(("path", "raw", "value"), READ_ONLY)
def test_kafka_variants_read(path: str, raw: bytes | None, value: object) -> None:
    assert decode(path, raw) == value


# ------------------------------------------------------------------ malformed input


def state(**fields: object) -> bytes:
    base: dict[str, object] = {
        "version": 1,
        "leader": 1,
        "leader_epoch": 3,
        "controller_epoch": 5,
        "isr": [1, 2],
    }
    base.update(fields)
    return json.dumps({k: v for k, v in base.items() if v is not ...}).encode()


def topic(**fields: object) -> bytes:
    base: dict[str, object] = {
        "version": 2,
        "partitions": {"0": [1, 2]},
        "adding_replicas": {},
        "removing_replicas": {},
    }
    base.update(fields)
    return json.dumps({k: v for k, v in base.items() if v is not ...}).encode()


def broker(**fields: object) -> bytes:
    base = json.loads(REFERENCE_BROKER)
    base.update(fields)
    return json.dumps({k: v for k, v in base.items() if v is not ...}).encode()


def plist(*entries: object, version: object = 1) -> bytes:
    return json.dumps({"version": version, "partitions": list(entries)}).encode()


REASSIGN, PREFERRED = zk_paths.REASSIGN_PARTITIONS, zk_paths.PREFERRED_REPLICA_ELECTION
ISR = zk_paths.isr_change("isr_change_0000000001")
LOGDIR = "/log_dir_event_notification/log_dir_event_0000000001"

BAD = [  # (path, data, words the message must contain)
    (STATE, b"", "no data"),
    (STATE, None, "no data"),
    (STATE, b"not json", "not JSON"),
    (STATE, b"\xff\xfe", "not UTF-8"),
    (STATE, b"[1,2]", "JSON object"),
    (STATE, b'{"version":1,"version":1,"leader":1}', "twice"),
    (
        STATE,
        b'{"version":1,"leader":NaN,"leader_epoch":3,"controller_epoch":5,"isr":[1]}',
        "not JSON",
    ),
    (STATE, state(leader="1"), "'leader' must be an integer"),
    (STATE, state(leader=True), "'leader' must be an integer"),
    (STATE, state(leader=1.0), "'leader' must be an integer"),
    (STATE, state(leader=-2), "'leader'"),
    (STATE, state(leader=2**31), "outside"),
    (STATE, state(leader_epoch=-1), "'leader_epoch'"),
    (STATE, state(controller_epoch=10**30), "outside"),
    (STATE, state(isr=...), "'isr' is missing"),
    (STATE, state(isr="1,2"), "array"),
    (STATE, state(isr=[1, 1]), "twice"),
    (STATE, state(isr=[-3]), "broker id"),
    (STATE, state(isr=["1"]), "broker id"),
    (STATE, state(version=2), "unknown version"),
    (STATE, state(version="1"), "unknown version"),
    (STATE, state(version=...), "'version' is missing"),
    (TOPIC, topic(partitions={"-1": [1]}), "not a partition id"),
    (TOPIC, topic(partitions={"x": [1]}), "not a partition id"),
    (TOPIC, topic(partitions={"99999999999": [1]}), "not a partition id"),
    (TOPIC, topic(partitions={"0": [1, 2, 1]}), "twice"),
    (TOPIC, topic(partitions={"1": [1], "01": [2]}), "partition 1 twice"),
    (TOPIC, topic(partitions={"0": []}), "empty"),
    (TOPIC, topic(partitions=[[1, 2]]), "JSON object"),
    (TOPIC, topic(partitions=...), "'partitions' is missing"),
    (TOPIC, topic(adding_replicas=...), "'adding_replicas' is missing"),
    (TOPIC, topic(removing_replicas={"5": [1]}), "does not have"),
    (TOPIC, topic(version=3, topic_id="x"), "unknown version"),
    (TOPIC, topic(version=None), "unknown version"),
    (zk_paths.CONTROLLER, b'{"version":1,"brokerid":"1","timestamp":"1"}', "'brokerid'"),
    (zk_paths.CONTROLLER, b'{"version":1,"brokerid":1,"timestamp":1}', "'timestamp'"),
    (zk_paths.CONTROLLER, b'{"version":1,"brokerid":1,"timestamp":"-5"}', "'timestamp'"),
    (
        zk_paths.CONTROLLER,
        b'{"version":1,"brokerid":1,"timestamp":"99999999999999999999"}',
        "'timestamp'",
    ),
    (zk_paths.CONTROLLER, b'{"version":1,"timestamp":"1"}', "'brokerid' is missing"),
    (zk_paths.CONTROLLER_EPOCH, b"-1", "controller epoch"),
    (zk_paths.CONTROLLER_EPOCH, b" 5", "controller epoch"),
    (zk_paths.CONTROLLER_EPOCH, b"1_000", "controller epoch"),
    (zk_paths.CONTROLLER_EPOCH, b"4294967296", "controller epoch"),
    (zk_paths.CONTROLLER_EPOCH, b"", "no data"),
    (zk_paths.broker(1), broker(version=3), "unknown version"),
    (zk_paths.broker(1), broker(version=5), "'features' is missing"),
    (zk_paths.broker(1), broker(endpoints=["PLAINTEXT:h:9092"]), "LISTENER://host:port"),
    (zk_paths.broker(1), broker(endpoints=["PLAINTEXT://h:70000"]), "outside 0..65535"),
    (zk_paths.broker(1), broker(endpoints=["SSL://h:1"]), "missing from"),
    (zk_paths.broker(1), broker(endpoints=["PLAINTEXT://h:1", "PLAINTEXT://g:2"]), "twice"),
    (
        zk_paths.broker(1),
        broker(listener_security_protocol_map={"PLAINTEXT": "TLS", "CONTROLLER": "PLAINTEXT"}),
        "unknown security protocol",
    ),
    (zk_paths.broker(1), broker(port="9092"), "'port'"),
    (zk_paths.broker(1), broker(rack=5), "'rack'"),
    (zk_paths.broker(1), broker(timestamp=...), "'timestamp' is missing"),
    (
        REASSIGN,
        plist(
            {"topic": "t", "partition": 0, "replicas": [1]},
            {"topic": "t", "partition": 0, "replicas": [2]},
        ),
        "listed twice",
    ),
    (REASSIGN, plist({"topic": "t", "partition": -1, "replicas": [1]}), "'partition'"),
    (REASSIGN, plist({"topic": "t", "partition": 0, "replicas": [1, 1]}), "twice"),
    (REASSIGN, plist({"topic": "t", "partition": 0, "replicas": []}), "empty"),
    (REASSIGN, plist({"topic": "t", "partition": 0}), "'replicas' of partitions[0] is missing"),
    (REASSIGN, plist({"topic": "a b", "partition": 0, "replicas": [1]}), "topic name"),
    (REASSIGN, plist({"topic": 7, "partition": 0, "replicas": [1]}), "'topic'"),
    (REASSIGN, plist("t-0"), "partitions[0] must be a JSON object"),
    (REASSIGN, b'{"version":1,"partitions":{}}', "array"),
    (
        PREFERRED,
        plist({"topic": "t", "partition": 0}, {"topic": "t", "partition": 0}),
        "listed twice",
    ),
    (PREFERRED, plist({"topic": "t", "partition": "0"}), "'partition'"),
    (PREFERRED, plist({"topic": "t", "partition": 0}, version=2), "unknown version"),
    (ISR, plist({"partition": 0}), "'topic' of partitions[0] is missing"),
    (ISR, plist({"topic": "t", "partition": 2**40}), "outside"),
    (LOGDIR, b'{"version":1,"broker":1,"event":2}', "unknown log dir event"),
    (LOGDIR, b'{"version":1,"broker":-1,"event":1}', "'broker'"),
    (zk_paths.CLUSTER_ID, b'{"version":"2","id":"x"}', "unknown version"),
    (zk_paths.CLUSTER_ID, b'{"version":"1","id":""}', "'id' is empty"),
    (zk_paths.CLUSTER_ID, b'{"version":"1","id":5}', "'id'"),
    ("/brokers/ids/x", REFERENCE_BROKER, "not a znode of Kafka's layout"),
    ("/brokers/ids/99999999999", REFERENCE_BROKER, "not a znode of Kafka's layout"),
    ("/brokers/topics/a b", topic(), "not a znode of Kafka's layout"),
    ("/brokers/topics/t/partitions/-1/state", state(), "not a znode of Kafka's layout"),
    ("/brokers/topics/t/partitions/²/state", state(), "not a znode of Kafka's layout"),
    ("/elsewhere", b"{}", "not a znode of Kafka's layout"),
]


@pytest.mark.parametrize(
    ("path", "raw", "words"), BAD, ids=[f"{i}:{p}:{w}" for i, (p, _, w) in enumerate(BAD)]
)
def test_malformed_input_raises_decode_error_naming_the_path(
    path: str, raw: bytes | None, words: str
) -> None:
    with pytest.raises(ZnodeDecodeError) as info:
        decode(path, raw)
    assert info.value.path == path
    assert str(info.value).startswith(path + ": ")
    assert words in str(info.value)


@given(st.binary(max_size=200))
def test_arbitrary_bytes_never_raise_anything_else(raw: bytes) -> None:
    for path in (
        STATE,
        TOPIC,
        zk_paths.broker(1),
        zk_paths.CONTROLLER,
        REASSIGN,
        ISR,
        LOGDIR,
        zk_paths.CLUSTER_ID,
        zk_paths.CONTROLLER_EPOCH,
    ):
        try:
            decode(path, raw)
        except ZnodeDecodeError as exc:
            assert exc.path == path


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


@given(
    st.dictionaries(
        st.sampled_from(
            [
                "version",
                "leader",
                "leader_epoch",
                "controller_epoch",
                "isr",
                "partitions",
                "adding_replicas",
                "removing_replicas",
                "brokerid",
                "timestamp",
                "endpoints",
                "host",
                "port",
                "listener_security_protocol_map",
                "rack",
                "broker",
                "event",
                "id",
                "features",
            ]
        ),
        json_values,
        max_size=10,
    )
)
def test_arbitrary_json_never_raises_anything_else(obj: dict[str, object]) -> None:
    raw = json.dumps(obj).encode()
    for path in (
        STATE,
        TOPIC,
        zk_paths.broker(1),
        zk_paths.CONTROLLER,
        REASSIGN,
        ISR,
        LOGDIR,
        zk_paths.CLUSTER_ID,
    ):
        try:
            decode(path, raw)
        except ZnodeDecodeError as exc:
            assert exc.path == path


BAD_VALUES = [
    (STATE, LeaderAndIsr(-2, 0, (), 0)),
    (STATE, LeaderAndIsr(1, 0, (1, 1), 0)),
    (STATE, LeaderAndIsr(1, 2**31, (1,), 0)),
    (STATE, ControllerEpochZnode(1)),
    (TOPIC, TopicAssignment(((0, ()),))),
    (TOPIC, TopicAssignment(((0, (1,)),), ((3, (2,)),))),
    (zk_paths.broker(2), BrokerRegistration(1)),
    (zk_paths.broker(1), BrokerRegistration(1, (Endpoint("A", "h", 1), Endpoint("A", "h", 2)))),
    (zk_paths.broker(1), BrokerRegistration(1, (Endpoint("A", "h h", 1),))),
    (REASSIGN, ReassignmentZnode(((("t", 0), (1,)), (("t", 0), (2,))))),
    (PREFERRED, PreferredElectionZnode((("a b", 0),))),
    (zk_paths.CONTROLLER_EPOCH, ControllerEpochZnode(-1)),
    ("/nowhere", EmptyZnode()),
]


@pytest.mark.parametrize(("path", "value"), BAD_VALUES)
def test_encode_refuses_what_kafka_could_not_read(path: str, value: object) -> None:
    with pytest.raises(ZnodeEncodeError) as info:
        encode(path, value)  # type: ignore[arg-type]
    assert info.value.path == path


def test_broker_info_takes_the_epoch_from_czxid() -> None:
    reg = decode(zk_paths.broker(1), REFERENCE_BROKER)
    assert isinstance(reg, BrokerRegistration)
    info = codec.broker_info(reg, czxid=4242)
    assert (info.broker_id, info.epoch, info.endpoints) == (1, 4242, reg.endpoints)
