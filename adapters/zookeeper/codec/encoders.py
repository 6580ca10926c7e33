"""Encoders: ``fsm`` values -> Kafka's znode bytes (the choices made: ``adapters.zookeeper.codec``)."""

from __future__ import annotations

from typing import Any

from adapters.zookeeper.codec import paths
from adapters.zookeeper.codec.errors import ZnodeEncodeError
from adapters.zookeeper.codec.fields import INT32_MAX, INT64_MAX, dumps, legal_topic
from adapters.zookeeper.codec.values import (
    _HOST,
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


class _Check:
    """Range checks for encoding (a value Kafka could not read back is refused before writing)."""

    def __init__(self, path: str) -> None:
        self.path = path

    def integer(self, value: int, what: str, lo: int = 0, hi: int = INT32_MAX) -> int:
        if type(value) is not int or not lo <= value <= hi:
            raise ZnodeEncodeError(
                self.path, f"{what} must be an integer in {lo}..{hi}, not {value!r}"
            )
        return value

    def ids(self, values: tuple[int, ...], what: str, nonempty: bool = False) -> list[int]:
        out = [self.integer(v, f"broker id in {what}") for v in values]
        if len(set(out)) != len(out) or (nonempty and not out):
            raise ZnodeEncodeError(
                self.path,
                f"{what} must be distinct broker ids"
                f"{' (at least one)' if nonempty else ''}: {values}",
            )
        return out

    def topic(self, name: str) -> str:
        if not isinstance(name, str) or not legal_topic(name):
            raise ZnodeEncodeError(self.path, f"{name!r} is not a legal Kafka topic name")
        return name


def encode_controller(path: str, v: ControllerZnode) -> bytes:
    c = _Check(path)
    return dumps(
        {
            "version": 1,
            "brokerid": c.integer(v.broker_id, "brokerid"),
            "timestamp": str(c.integer(v.timestamp_ms, "timestamp", hi=INT64_MAX)),
        }
    )


def encode_controller_epoch(path: str, v: ControllerEpochZnode) -> bytes:
    return str(_Check(path).integer(v.epoch, "epoch")).encode("ascii")


def _endpoint_string(path: str, e: Endpoint) -> str:
    if (
        not _LISTENER.fullmatch(e.listener)
        or not _HOST.fullmatch(e.host)
        or e.security_protocol not in SECURITY_PROTOCOLS
    ):
        raise ZnodeEncodeError(path, f"endpoint {e} cannot be written in Kafka's format")
    _Check(path).integer(e.port, "endpoint port", hi=65535)
    host = f"[{e.host}]" if ":" in e.host else e.host
    return f"{e.listener}://{host}:{e.port}"


def plaintext_endpoint(endpoints: tuple[Endpoint, ...]) -> Endpoint | None:
    """The endpoint behind the legacy ``host``/``port`` fields: the listener named PLAINTEXT (as in
    the reference's example), else the first endpoint whose security protocol is PLAINTEXT (Kafka's
    ``BrokerIdZNode.encode``), else none (``null``/``-1``)."""
    named = next((e for e in endpoints if e.listener == "PLAINTEXT"), None)
    return named or next((e for e in endpoints if e.security_protocol == "PLAINTEXT"), None)


def encode_broker(path: str, v: BrokerRegistration) -> bytes:
    c = _Check(path)
    c.integer(v.broker_id, "broker id")
    if path != paths.broker(v.broker_id):
        raise ZnodeEncodeError(path, f"holds broker {v.broker_id}'s registration")
    if len({e.listener for e in v.endpoints}) != len(v.endpoints):
        raise ZnodeEncodeError(path, f"endpoints name a listener twice: {v.endpoints}")
    plaintext = plaintext_endpoint(v.endpoints)
    return dumps(
        {
            "version": 4,
            "host": plaintext.host if plaintext else None,
            "port": plaintext.port if plaintext else -1,
            "jmx_port": -1,
            "timestamp": str(c.integer(v.timestamp_ms, "timestamp", hi=INT64_MAX)),
            "endpoints": [_endpoint_string(path, e) for e in v.endpoints],
            "rack": v.rack,
            "listener_security_protocol_map": {
                e.listener: e.security_protocol for e in v.endpoints
            },
        }
    )


def _assignment_map(
    c: _Check,
    pairs: tuple[tuple[int, tuple[int, ...]], ...],
    what: str,
) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for p, replicas in sorted(pairs):
        key = str(c.integer(p, f"partition in {what}"))
        if key in out:
            raise ZnodeEncodeError(c.path, f"partition {p} appears twice in {what}")
        out[key] = c.ids(replicas, f"{what} of partition {p}", nonempty=True)
    return out


def encode_topic(path: str, v: TopicAssignment) -> bytes:
    c = _Check(path)
    partitions = _assignment_map(c, v.partitions, "partitions")
    adding = _assignment_map(c, v.adding, "adding_replicas")
    removing = _assignment_map(c, v.removing, "removing_replicas")
    if not set(adding) | set(removing) <= set(partitions):
        raise ZnodeEncodeError(path, "adding/removing replicas name a partition the topic lacks")
    return dumps(
        {
            "version": 2,
            "partitions": partitions,
            "adding_replicas": adding,
            "removing_replicas": removing,
        }
    )


def encode_partition_state(path: str, v: LeaderAndIsr) -> bytes:
    # the fast path (a failover or a broker failure writes tens of thousands): the same bytes as
    # ``dumps`` below when every field is in range; otherwise the checks one by one say what
    leader, epoch, cepoch, isr = v.leader, v.leader_epoch, v.controller_epoch, v.isr
    if (type(leader) is int and -1 <= leader <= INT32_MAX
            and type(epoch) is int and 0 <= epoch <= INT32_MAX
            and type(cepoch) is int and 0 <= cepoch <= INT32_MAX
            and type(isr) is tuple and _distinct_ids(isr)):
        return _STATE_FORMAT % (leader, epoch, cepoch, ",".join(map(str, isr)).encode("ascii"))
    c = _Check(path)
    return dumps(
        {
            "version": 1,
            "leader": c.integer(v.leader, "leader", lo=-1),
            "leader_epoch": c.integer(v.leader_epoch, "leader_epoch"),
            "controller_epoch": c.integer(v.controller_epoch, "controller_epoch"),
            "isr": c.ids(v.isr, "isr"),
        }
    )


_STATE_FORMAT = b'{"version":1,"leader":%d,"leader_epoch":%d,"controller_epoch":%d,"isr":[%b]}'


def _distinct_ids(ids: tuple[int, ...]) -> bool:
    """Distinct int32 broker ids (bools and other int subclasses are not), with C-level calls."""
    return not ids or (set(map(type, ids)) == _INT_ONLY and min(ids) >= 0
                       and max(ids) <= INT32_MAX and len(set(ids)) == len(ids))


_INT_ONLY = {int}


def _partition_list(c: _Check, tps: tuple[TopicPartition, ...]) -> list[dict[str, Any]]:
    if len(set(tps)) != len(tps):
        raise ZnodeEncodeError(c.path, f"a partition is listed twice: {tps}")
    return [{"topic": c.topic(t), "partition": c.integer(p, "partition")} for t, p in tps]


def encode_reassignment(path: str, v: ReassignmentZnode) -> bytes:
    c = _Check(path)
    entries = _partition_list(c, tuple(tp for tp, _ in v.partitions))
    for entry, (_, replicas) in zip(entries, v.partitions, strict=True):
        entry["replicas"] = c.ids(replicas, "replicas", nonempty=True)
    return dumps({"version": 1, "partitions": entries})


def encode_partitions(path: str, v: PreferredElectionZnode | IsrChangeZnode) -> bytes:
    return dumps({"version": 1, "partitions": _partition_list(_Check(path), v.partitions)})


def encode_log_dir_event(path: str, v: LogDirEventZnode) -> bytes:
    c = _Check(path)
    if v.event != LOG_DIR_FAILURE:
        raise ZnodeEncodeError(path, f"unknown log dir event {v.event!r}")
    return dumps({"version": 1, "broker": c.integer(v.broker_id, "broker"), "event": v.event})


def encode_cluster_id(path: str, v: ClusterIdZnode) -> bytes:
    if not isinstance(v.cluster_id, str) or not v.cluster_id:
        raise ZnodeEncodeError(path, f"cluster id must be a non-empty string, not {v.cluster_id!r}")
    return dumps({"version": "1", "id": v.cluster_id})


def encode_empty(path: str, v: EmptyZnode) -> bytes:
    return b""
