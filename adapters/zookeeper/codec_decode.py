"""Decoders: Kafka's znode bytes -> ``fsm`` values, strict (see ``codecs`` for the choices made)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from adapters.zookeeper import codec_paths
from adapters.zookeeper.codec_fields import INT32_MAX, Reader
from adapters.zookeeper.codec_values import (
    _ENDPOINT,
    _LISTENER,
    LOG_DIR_FAILURE,
    SECURITY_PROTOCOLS,
    ClusterIdZnode,
    LogDirEventZnode,
)
from fsm.values import Endpoint, LeaderAndIsr, TopicAssignment, TopicPartition
from fsm.znodes import (
    BrokerRegistration,
    ControllerEpochZnode,
    ControllerZnode,
    EmptyZnode,
    IsrChangeZnode,
    PreferredElectionZnode,
    ReassignmentZnode,
)


def decode_controller(path: str, data: bytes | None) -> ControllerZnode:
    r = Reader(path)
    obj = r.json_object(data)
    r.version(obj, (1,))
    return ControllerZnode(r.integer(obj, "brokerid", lo=0), r.long_string(obj, "timestamp"))


def decode_controller_epoch(path: str, data: bytes | None) -> ControllerEpochZnode:
    r = Reader(path)
    text = r.text(data)
    if not re.fullmatch(r"[0-9]+", text) or int(text) > INT32_MAX:
        r.fail(f"the controller epoch must be a non-negative int32 in decimal, not {text[:40]!r}")
    return ControllerEpochZnode(int(text))


def _endpoint(r: Reader, text: Any, protocols: dict[str, str]) -> Endpoint:
    if not isinstance(text, str) or not (m := _ENDPOINT.fullmatch(text)):
        r.fail(f"endpoint {text!r} is not LISTENER://host:port")
    listener, host, port = m.group(1), m.group(2), int(m.group(3))
    if not _LISTENER.fullmatch(listener):
        r.fail(f"endpoint {text!r} has an illegal listener name")
    if not 0 <= port <= 65535:
        r.fail(f"endpoint {text!r} has port {port}, outside 0..65535")
    if listener not in protocols:
        r.fail(f"listener {listener} is missing from listener_security_protocol_map")
    return Endpoint(listener, host, port, protocols[listener])


def decode_broker(path: str, data: bytes | None) -> BrokerRegistration:
    r = Reader(path)
    broker_id = codec_paths.broker_id(path)
    if broker_id is None:
        r.fail("is not /brokers/ids/<broker id 0..2147483647>")
    obj = r.json_object(data)
    if r.version(obj, (4, 5)) == 5:
        r.obj(r.field(obj, "features"), "field 'features'")
    protocols = r.obj(
        r.field(obj, "listener_security_protocol_map"), "field 'listener_security_protocol_map'"
    )
    for listener, protocol in protocols.items():
        if protocol not in SECURITY_PROTOCOLS:
            r.fail(f"listener {listener} maps to unknown security protocol {protocol!r}")
    endpoints = tuple(
        _endpoint(r, e, protocols) for e in r.array(r.field(obj, "endpoints"), "field 'endpoints'")
    )
    if len({e.listener for e in endpoints}) != len(endpoints):
        r.fail("endpoints name a listener twice")
    r.string(obj, "host", nullable=True)
    r.integer(obj, "port", lo=-1, hi=65535)
    if "jmx_port" in obj:
        r.integer(obj, "jmx_port", lo=-1, hi=65535)
    return BrokerRegistration(
        broker_id, endpoints, r.string(obj, "rack", nullable=True), r.long_string(obj, "timestamp")
    )


def _read_assignment(r: Reader, value: Any, what: str) -> tuple[tuple[int, tuple[int, ...]], ...]:
    pairs = []
    seen: set[int] = set()  # a set, not a scan: topics with 1,000 partitions decode in linear time
    for key, replicas in r.obj(value, f"field {what!r}").items():
        p = r.partition_key(key, f"field {what!r}")
        if p in seen:
            r.fail(f"field {what!r} lists partition {p} twice")
        seen.add(p)
        pairs.append((p, r.broker_ids(replicas, f"{what} of partition {p}", nonempty=True)))
    return tuple(sorted(pairs))


def decode_topic(path: str, data: bytes | None) -> TopicAssignment:
    r = Reader(path)
    obj = r.json_object(data)
    version = r.version(obj, (1, 2))
    partitions = _read_assignment(r, r.field(obj, "partitions"), "partitions")
    if version == 1:
        return TopicAssignment(partitions)
    adding = _read_assignment(r, r.field(obj, "adding_replicas"), "adding_replicas")
    removing = _read_assignment(r, r.field(obj, "removing_replicas"), "removing_replicas")
    known = {p for p, _ in partitions}
    for name, pairs in (("adding_replicas", adding), ("removing_replicas", removing)):
        if stray := [p for p, _ in pairs if p not in known]:
            r.fail(f"{name} names partition {stray[0]}, which the topic does not have")
    return TopicAssignment(partitions, adding, removing)


def decode_partition_state(path: str, data: bytes | None) -> LeaderAndIsr:
    r = Reader(path)
    obj = r.json_object(data)
    r.version(obj, (1,))
    return LeaderAndIsr(
        leader=r.integer(obj, "leader", lo=-1),
        leader_epoch=r.integer(obj, "leader_epoch", lo=0),
        isr=r.broker_ids(r.field(obj, "isr"), "field 'isr'"),
        controller_epoch=r.integer(obj, "controller_epoch", lo=0),
    )


def _read_partitions(
    r: Reader, data: bytes | None, extra: Callable[[dict[str, Any], str], Any]
) -> list[tuple[TopicPartition, Any]]:
    obj = r.json_object(data)
    r.version(obj, (1,))
    out: list[tuple[TopicPartition, Any]] = []
    seen: set[TopicPartition] = set()
    for i, item in enumerate(r.array(r.field(obj, "partitions"), "field 'partitions'")):
        where = f" of partitions[{i}]"
        entry = r.obj(item, f"partitions[{i}]")
        tp = (
            r.topic(r.field(entry, "topic", where), f"field 'topic'{where}"),
            r.integer(entry, "partition", lo=0, where=where),
        )
        if tp in seen:
            r.fail(f"partition {tp[0]}-{tp[1]} is listed twice")
        seen.add(tp)
        out.append((tp, extra(entry, where)))
    return out


def decode_reassignment(path: str, data: bytes | None) -> ReassignmentZnode:
    r = Reader(path)
    items = _read_partitions(
        r,
        data,
        lambda e, where: r.broker_ids(
            r.field(e, "replicas", where), f"field 'replicas'{where}", nonempty=True
        ),
    )
    return ReassignmentZnode(tuple(items))


def decode_preferred_election(path: str, data: bytes | None) -> PreferredElectionZnode:
    return PreferredElectionZnode(
        tuple(tp for tp, _ in _read_partitions(Reader(path), data, lambda e, w: None))
    )


def decode_isr_change(path: str, data: bytes | None) -> IsrChangeZnode:
    return IsrChangeZnode(
        tuple(tp for tp, _ in _read_partitions(Reader(path), data, lambda e, w: None))
    )


def decode_log_dir_event(path: str, data: bytes | None) -> LogDirEventZnode:
    r = Reader(path)
    obj = r.json_object(data)
    r.version(obj, (1,))
    event = r.integer(obj, "event")
    if event != LOG_DIR_FAILURE:
        r.fail(f"unknown log dir event {event} (known: {LOG_DIR_FAILURE} = log dir failure)")
    return LogDirEventZnode(r.integer(obj, "broker", lo=0), event)


def decode_cluster_id(path: str, data: bytes | None) -> ClusterIdZnode:
    r = Reader(path)
    obj = r.json_object(data)
    if obj.get("version") not in ("1", 1):  # Kafka writes the string "1"
        r.fail(f'unknown version {obj.get("version")!r} (known: "1")')
    return ClusterIdZnode(r.string(obj, "id", nonempty=True) or "")


def decode_empty(path: str, data: bytes | None) -> EmptyZnode:
    return EmptyZnode()
