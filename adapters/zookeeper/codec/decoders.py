"""Decoders: Kafka's znode bytes -> ``fsm`` values, strict (the choices made:
``adapters.zookeeper.codec``)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from adapters.zookeeper.codec import paths, topic_layout
from adapters.zookeeper.codec.fields import (
    INT32_MAX,
    Reader,
    fast_assignment,
    fast_broker_ids,
    fast_partition_key,
)
from adapters.zookeeper.codec.values import (
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
    broker_id = paths.broker_id(path)
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
    fast = fast_assignment(value)  # all partitions at once (C-level checks)
    if fast is not None:
        return tuple(fast)
    pairs = []
    seen: set[int] = set()  # a set, not a scan: topics with 1,000 partitions decode in linear time
    for key, replicas in r.obj(value, f"field {what!r}").items():
        # the fast checks first (a failover decodes every partition of every topic); the
        # Reader's item-by-item checks only to word an error
        p = fast_partition_key(key)
        if p is None:
            p = r.partition_key(key, f"field {what!r}")
        if p in seen:
            r.fail(f"field {what!r} lists partition {p} twice")
        seen.add(p)
        ids = fast_broker_ids(replicas)
        if not ids:
            ids = r.broker_ids(replicas, f"{what} of partition {p}", nonempty=True)
        pairs.append((p, ids))
    pairs.sort()
    return tuple(pairs)


_TOPIC_KEYS = {1: {"version", "partitions"},
               2: {"version", "partitions", "adding_replicas", "removing_replicas"}}
"""The fields of each topic znode version, all of which ``decode_topic`` checks."""


def _quick_topic(data: bytes | None) -> dict[str, Any] | None:
    """The topic znode parsed by ``_quick_object`` when it has exactly its version's fields, each
    assignment an object, and its only strings are those objects' keys; else None. (Every value
    left is then checked by ``decode_topic``: no NaN or duplicate key gets through.)"""
    obj = _quick_object(data)
    if obj is None:
        return None
    version = obj.get("version")
    if type(version) is not int or obj.keys() != _TOPIC_KEYS.get(version):
        return None
    keys = len(obj)
    for name, value in obj.items():
        if name != "version":
            if type(value) is not dict:
                return None
            keys += len(value)
    return obj if data.count(b'"') == 2 * keys else None  # type: ignore[union-attr]


def decode_topic(path: str, data: bytes | None) -> TopicAssignment:
    fast = topic_layout.assignment(data)  # Kafka's own layout, without the JSON parser
    if fast is not None:
        return fast
    r = Reader(path)
    obj = _quick_topic(data) or r.json_object(data)
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


def _quick_object(data: bytes | None) -> dict[str, Any] | None:
    """``data`` as a JSON object parsed by the C decoder alone, or None (not UTF-8, not JSON, not
    an object). Unlike ``Reader.json_object`` it lets duplicate keys and NaN/Infinity through, so
    a caller trusts it only after checking that every field it keeps has the type it wants (no
    NaN) and that the data holds no string token beyond the keys it counted: each string token
    has two quotes of its own, so ``2 * keys`` quotes in all means no key appears twice (a
    duplicate would be one more key token than the dict has). Anything else goes to the strict
    path, which says what is wrong."""
    if not data:
        return None
    try:
        text = data.decode("utf-8")
        value, end = _SCAN(text, 0)  # no surrounding whitespace: Kafka writes none
    except (StopIteration, ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        return None
    return value if type(value) is dict and end == len(text) else None


_SCAN = json.JSONDecoder().scan_once
"""The C scanner behind ``json.loads`` without its Python-level wrapping (~1 µs instead of ~3 µs
for a partition state)."""


def decode_partition_state(path: str, data: bytes | None) -> LeaderAndIsr:
    obj = _quick_object(data)  # the fast path: a failover decodes every partition's state
    # five keys and ten quotes: the five keys are the only strings, none twice (_quick_object)
    if obj is not None and len(obj) == 5 and data.count(b'"') == 10:  # type: ignore[union-attr]
        leader = obj.get("leader")
        epoch = obj.get("leader_epoch")
        cepoch = obj.get("controller_epoch")
        isr = fast_broker_ids(obj.get("isr"))
        version = obj.get("version")
        if (type(version) is int and version == 1 and isr is not None
                and type(leader) is int and -1 <= leader <= INT32_MAX
                and type(epoch) is int and 0 <= epoch <= INT32_MAX
                and type(cepoch) is int and 0 <= cepoch <= INT32_MAX):
            return LeaderAndIsr(leader, epoch, isr, cepoch)
    r = Reader(path)  # strict parsing and the checks one by one, to say what is wrong
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
