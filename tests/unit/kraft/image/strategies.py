"""Random *valid* metadata logs for the image's property tests.

``valid_logs()`` draws a list of records one at a time, keeping a small model of what exists
(registered brokers and their epochs, topics and their partitions) so that every record
replays: brokers register with increasing epochs, fences and registration changes carry the
broker's current epoch, topics get fresh ids (names may come back after a removal),
partitions belong to existing topics, partition changes name existing partitions, and so on.
Configs, features, quotas, ACLs, tokens, SCRAM credentials and failed replicas are drawn from
small pools so that later records overwrite and delete earlier ones."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from fsm.kraft.records.uuid import Uuid, uuid_of
from fsm.kraft.records.values import (
    LEADER_UNCHANGED,
    NO_LEADER,
    AccessControlRecord,
    BrokerEndpoint,
    BrokerFeature,
    BrokerRegistrationChangeRecord,
    ConfigRecord,
    CredentialInfo,
    DelegationTokenRecord,
    EntityData,
    FailedReplicasRecord,
    FeatureLevelRecord,
    FenceBrokerRecord,
    PartitionChangeRecord,
    PartitionRecord,
    QuotaRecord,
    RegisterBrokerRecord,
    RemoveTopicRecord,
    TopicRecord,
    TopicWithFailures,
    UnfenceBrokerRecord,
    UnregisterBrokerRecord,
    UserScramCredentialRecord,
)

BROKER_IDS = range(5)
TOPIC_NAMES = ("a", "b", "c", "d", "e", "f")
PARTITION_IDS = range(4)

replica_lists = st.lists(st.sampled_from(BROKER_IDS), min_size=1, max_size=3,
                         unique=True).map(tuple)
maybe_lists = st.none() | st.lists(st.sampled_from(BROKER_IDS), max_size=3,
                                   unique=True).map(tuple)
small_text = st.sampled_from(("", "x", "y", "z"))


@dataclass
class Model:
    """What exists so far: enough to draw only records that replay."""

    next_epoch: int = 1  # broker epochs come from one increasing counter (the log offset)
    next_topic: int = 1  # topic ids are never reused
    brokers: dict[int, int] = field(default_factory=dict)  # id -> current epoch
    topics: dict[Uuid, str] = field(default_factory=dict)  # id -> name
    partitions: dict[Uuid, set[int]] = field(default_factory=dict)


def _register(draw: Any, m: Model) -> RegisterBrokerRecord:
    broker_id = draw(st.sampled_from(BROKER_IDS))
    epoch = m.next_epoch + draw(st.integers(0, 3))
    m.next_epoch = epoch + 1
    m.brokers[broker_id] = epoch
    return RegisterBrokerRecord(
        broker_id, uuid_of(draw(st.integers(0, 3)) + 100 * broker_id), epoch,
        tuple(BrokerEndpoint(name, f"h{broker_id}", port) for name, port in draw(
            st.lists(st.tuples(st.sampled_from(("PLAINTEXT", "SSL")), st.integers(1, 3)),
                     max_size=2, unique_by=lambda e: e[0]))),
        draw(st.sampled_from(((), (BrokerFeature("metadata.version", 1, 7),)))),
        draw(st.none() | st.sampled_from(("r1", "r2"))),
        draw(st.booleans()), draw(st.booleans()))


def _broker_flags(draw: Any, m: Model) -> Any:
    broker_id = draw(st.sampled_from(sorted(m.brokers)))
    epoch = m.brokers[broker_id]
    kind = draw(st.sampled_from(("fence", "unfence", "change")))
    if kind == "fence":
        return FenceBrokerRecord(broker_id, epoch)
    if kind == "unfence":
        return UnfenceBrokerRecord(broker_id, epoch)
    return BrokerRegistrationChangeRecord(broker_id, epoch, draw(st.sampled_from((-1, 0, 1))),
                                          draw(st.sampled_from((0, 1))))


def _unregister(draw: Any, m: Model) -> UnregisterBrokerRecord:
    broker_id = draw(st.sampled_from(sorted(m.brokers)))
    return UnregisterBrokerRecord(broker_id, m.brokers.pop(broker_id))


def _topic(draw: Any, m: Model) -> TopicRecord | None:
    free = [n for n in TOPIC_NAMES if n not in m.topics.values()]
    if not free:
        return None
    tid = uuid_of(m.next_topic)
    m.next_topic += 1
    name = draw(st.sampled_from(free))
    m.topics[tid], m.partitions[tid] = name, set()
    return TopicRecord(name, tid)


def _partition(draw: Any, m: Model) -> PartitionRecord | None:
    tid = draw(st.sampled_from(sorted(m.topics)))
    free = [p for p in PARTITION_IDS if p not in m.partitions[tid]]
    if not free:
        return None
    pid = draw(st.sampled_from(free))
    m.partitions[tid].add(pid)
    replicas = draw(replica_lists)
    isr = tuple(r for r in replicas if draw(st.booleans())) or replicas[:1]
    return PartitionRecord(pid, tid, replicas, isr, draw(maybe_lists) or (), (),
                           draw(st.sampled_from((NO_LEADER, *isr))), draw(st.integers(0, 5)),
                           draw(st.integers(0, 5)))


def _partition_change(draw: Any, m: Model) -> PartitionChangeRecord | None:
    existing = sorted((tid, p) for tid, ps in m.partitions.items() for p in ps)
    if not existing:
        return None
    tid, pid = draw(st.sampled_from(existing))
    return PartitionChangeRecord(
        pid, tid, draw(maybe_lists),
        draw(st.sampled_from((LEADER_UNCHANGED, NO_LEADER, *BROKER_IDS))),
        draw(st.none() | replica_lists), draw(maybe_lists), draw(maybe_lists))


def _config(draw: Any, m: Model) -> ConfigRecord:
    rtype = draw(st.sampled_from((2, 4)))
    rname = draw(st.sampled_from(TOPIC_NAMES if rtype == 2 else tuple(map(str, BROKER_IDS))))
    return ConfigRecord(rtype, rname, draw(st.sampled_from(("retention.ms", "cleanup.policy"))),
                        draw(st.none() | st.sampled_from(("1", "2", "delete"))))


def _remove_topic(draw: Any, m: Model) -> RemoveTopicRecord:
    tid = draw(st.sampled_from(sorted(m.topics)))
    del m.topics[tid], m.partitions[tid]
    return RemoveTopicRecord(tid)


def _other(draw: Any, m: Model) -> Any:
    kind = draw(st.sampled_from(("feature", "quota", "acl", "token", "scram", "failed")))
    if kind == "feature":
        return FeatureLevelRecord(draw(st.sampled_from(("metadata.version", "kraft.version"))),
                                  draw(st.integers(0, 2)), draw(st.integers(2, 9)))
    if kind == "quota":
        entity = (EntityData(draw(st.sampled_from(("user", "client-id"))),
                             draw(st.none() | st.sampled_from(("u1", "u2")))),)
        return QuotaRecord(entity, draw(st.sampled_from(("producer_byte_rate", "request_percentage"))),
                           draw(st.floats(0, 1e6, allow_nan=False)), draw(st.booleans()))
    if kind == "acl":
        return AccessControlRecord(draw(st.sampled_from((2, 3))),
                                   draw(st.none() | st.sampled_from(("t", "g"))),
                                   draw(st.sampled_from((3, 4))), draw(st.sampled_from(
                                       ("User:alice", "User:bob"))), "*",
                                   draw(st.integers(2, 4)), draw(st.sampled_from((2, 3))))
    if kind == "token":
        return DelegationTokenRecord(draw(small_text), tuple(draw(st.lists(small_text,
                                                                          max_size=2))),
                                     1, 3, draw(st.integers(1, 3)),
                                     draw(st.sampled_from(("tok1", "tok2"))))
    if kind == "scram":
        return UserScramCredentialRecord(draw(st.sampled_from(("alice", "bob"))), tuple(
            CredentialInfo(mech, b"salt", draw(st.binary(max_size=4)), 4096)
            for mech in draw(st.lists(st.sampled_from((1, 2)), unique=True, max_size=2))))
    return FailedReplicasRecord(draw(st.sampled_from(BROKER_IDS)), tuple(
        TopicWithFailures(uuid_of(draw(st.integers(1, 4))),
                          tuple(draw(st.lists(st.sampled_from(PARTITION_IDS), max_size=2))))
        for _ in range(draw(st.integers(0, 2)))))


@st.composite
def valid_logs(draw: Any, max_records: int = 60) -> list[Any]:
    """A list of records that replays onto an empty image without an error."""
    m = Model()
    out: list[Any] = []
    for _ in range(draw(st.integers(0, max_records))):
        kinds = ["register", "topic", "config", "other"]
        if m.brokers:
            kinds += ["flags", "flags", "unregister"]
        if m.topics:
            kinds += ["partition", "partition", "partition", "change", "change", "remove"]
        kind = draw(st.sampled_from(kinds))
        record = {"register": _register, "flags": _broker_flags, "unregister": _unregister,
                  "topic": _topic, "partition": _partition, "change": _partition_change,
                  "config": _config, "remove": _remove_topic, "other": _other}[kind](draw, m)
        if record is not None:
            out.append(record)
    return out
