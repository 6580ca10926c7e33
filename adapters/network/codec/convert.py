"""``fsm.requests`` values <-> wire dicts for the controller APIs.

The core lists partitions flat; LeaderAndIsr v2, StopReplica v1 and UpdateMetadata v5 group
them by topic. ``*_to_wire`` groups by topic in order of first appearance (partitions keep
their order within a topic); ``*_from_wire`` flattens topic by topic.

What the wire does not carry, and what ``*_from_wire`` puts instead:
- a broker's epoch in LiveLeaders / LiveBrokers: ``-1`` (KIP-380 stamps only the target);
- LiveLeaders holds one endpoint per broker (the inter-broker listener's): ``to_wire``
  picks the endpoint named ``listener`` (the first one when ``None``), ``from_wire``
  names it ``listener`` (default "PLAINTEXT");
- ControlledShutdown v0/v1 carry no broker epoch: ``-1``;
- error codes the core does not know map to ``UNKNOWN_SERVER_ERROR``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from adapters.network.codec.apis.update_metadata import SECURITY_PROTOCOLS
from adapters.network.codec.errors import EncodeError
from fsm.errors import ErrorCode
from fsm.requests import (
    ControlledShutdownRequest,
    ControlledShutdownResponse,
    ControllerResponse,
    LeaderAndIsrPartition,
    LeaderAndIsrRequest,
    StopReplicaRequest,
    UpdateMetadataPartition,
    UpdateMetadataRequest,
)
from fsm.values import BrokerInfo, Endpoint, TopicPartition

UNKNOWN_EPOCH = -1
PROTOCOL_NAMES = {code: name for name, code in SECURITY_PROTOCOLS.items()}
T = TypeVar("T")
Wire = dict[str, Any]


_ERRORS_BY_CODE = {int(e): e for e in ErrorCode}


def error_code(code: int) -> ErrorCode:
    """The core's ``ErrorCode`` for a wire code (UNKNOWN_SERVER_ERROR when unknown). A dict
    lookup: ``ErrorCode(code)`` goes through ``EnumType.__call__`` (a few microseconds), and a
    response of 10,000 partitions maps 10,000 codes on the controller's side."""
    return _ERRORS_BY_CODE.get(code, ErrorCode.UNKNOWN_SERVER_ERROR)


def group_by_topic(items: Iterable[T], topic: Callable[[T], str]) -> list[tuple[str, list[T]]]:
    groups: dict[str, list[T]] = {}
    for item in items:
        groups.setdefault(topic(item), []).append(item)
    return list(groups.items())


# ---------------------------------------------------------------- LeaderAndIsr v2


def leader_and_isr_request_to_wire(req: LeaderAndIsrRequest, listener: str | None = None,
                                   topic_states: Any = None) -> Wire:
    """``topic_states``: the request's partitions already converted (or encoded: ``wire.Encoded``)
    by ``leader_and_isr_topic_states``; converted here when None."""
    return {
        "controller_id": req.controller_id,
        "controller_epoch": req.controller_epoch,
        "broker_epoch": req.broker_epoch,
        "topic_states": (leader_and_isr_topic_states(req.partitions) if topic_states is None
                         else topic_states),
        "live_leaders": [_live_leader(b, listener) for b in req.live_leaders],
    }


def leader_and_isr_topic_states(partitions: tuple[LeaderAndIsrPartition, ...]) -> list[Wire]:
    return [
        {"topic_name": topic, "partition_states": [_lai_partition(p) for p in parts]}
        for topic, parts in group_by_topic(partitions, lambda p: p.topic)
    ]


def _lai_partition(p: LeaderAndIsrPartition) -> Wire:
    return {
        "partition_index": p.partition,
        "controller_epoch": p.controller_epoch,
        "leader": p.leader,
        "leader_epoch": p.leader_epoch,
        "isr": list(p.isr),
        "zk_version": p.zk_version,
        "replicas": list(p.replicas),
        "is_new": p.is_new,
    }


def _live_leader(b: BrokerInfo, listener: str | None) -> Wire:
    matching = [e for e in b.endpoints if listener is None or e.listener == listener]
    if not matching:
        raise EncodeError(f"broker {b.broker_id} has no endpoint for listener {listener!r}")
    return {"broker_id": b.broker_id, "host_name": matching[0].host, "port": matching[0].port}


def leader_and_isr_request_from_wire(w: Wire, listener: str = "PLAINTEXT") -> LeaderAndIsrRequest:
    return LeaderAndIsrRequest(
        controller_id=w["controller_id"],
        controller_epoch=w["controller_epoch"],
        broker_epoch=w["broker_epoch"],
        partitions=tuple(
            LeaderAndIsrPartition(
                topic=t["topic_name"],
                partition=p["partition_index"],
                controller_epoch=p["controller_epoch"],
                leader=p["leader"],
                leader_epoch=p["leader_epoch"],
                isr=tuple(p["isr"]),
                zk_version=p["zk_version"],
                replicas=tuple(p["replicas"]),
                is_new=p["is_new"],
            )
            for t in w["topic_states"]
            for p in t["partition_states"]
        ),
        live_leaders=tuple(
            BrokerInfo(
                b["broker_id"], UNKNOWN_EPOCH, (Endpoint(listener, b["host_name"], b["port"]),)
            )
            for b in w["live_leaders"]
        ),
    )


# ---------------------------------------------------------------- UpdateMetadata v5


def update_metadata_request_to_wire(req: UpdateMetadataRequest,
                                    topic_states: Any = None) -> Wire:
    """``topic_states`` as for ``leader_and_isr_request_to_wire``."""
    return {
        "controller_id": req.controller_id,
        "controller_epoch": req.controller_epoch,
        "broker_epoch": req.broker_epoch,
        "topic_states": (update_metadata_topic_states(req.partitions) if topic_states is None
                         else topic_states),
        "live_brokers": [_live_broker(b) for b in req.live_brokers],
    }


def update_metadata_topic_states(partitions: tuple[UpdateMetadataPartition, ...]) -> list[Wire]:
    return [
        {"topic_name": topic, "partition_states": [_um_partition(p) for p in parts]}
        for topic, parts in group_by_topic(partitions, lambda p: p.topic)
    ]


def _um_partition(p: UpdateMetadataPartition) -> Wire:
    return {
        "partition_index": p.partition,
        "controller_epoch": p.controller_epoch,
        "leader": p.leader,
        "leader_epoch": p.leader_epoch,
        "isr": list(p.isr),
        "zk_version": p.zk_version,
        "replicas": list(p.replicas),
        "offline_replicas": list(p.offline_replicas),
    }


def _live_broker(b: BrokerInfo) -> Wire:
    return {
        "id": b.broker_id,
        "endpoints": [
            {
                "port": e.port,
                "host": e.host,
                "listener": e.listener,
                "security_protocol": _protocol_code(e.security_protocol),
            }
            for e in b.endpoints
        ],
        "rack": b.rack,
    }


def _protocol_code(name: str) -> int:
    try:
        return SECURITY_PROTOCOLS[name]
    except KeyError:
        raise EncodeError(f"unknown security protocol {name!r}") from None


def update_metadata_request_from_wire(w: Wire) -> UpdateMetadataRequest:
    return UpdateMetadataRequest(
        controller_id=w["controller_id"],
        controller_epoch=w["controller_epoch"],
        broker_epoch=w["broker_epoch"],
        partitions=tuple(
            UpdateMetadataPartition(
                topic=t["topic_name"],
                partition=p["partition_index"],
                controller_epoch=p["controller_epoch"],
                leader=p["leader"],
                leader_epoch=p["leader_epoch"],
                isr=tuple(p["isr"]),
                zk_version=p["zk_version"],
                replicas=tuple(p["replicas"]),
                offline_replicas=tuple(p["offline_replicas"]),
            )
            for t in w["topic_states"]
            for p in t["partition_states"]
        ),
        live_brokers=tuple(
            BrokerInfo(
                b["id"],
                UNKNOWN_EPOCH,
                tuple(
                    Endpoint(
                        e["listener"],
                        e["host"],
                        e["port"],
                        PROTOCOL_NAMES.get(e["security_protocol"], str(e["security_protocol"])),
                    )
                    for e in b["endpoints"]
                ),
                b["rack"],
            )
            for b in w["live_brokers"]
        ),
    )


# ---------------------------------------------------------------- StopReplica v1


def stop_replica_request_to_wire(req: StopReplicaRequest) -> Wire:
    return {
        "controller_id": req.controller_id,
        "controller_epoch": req.controller_epoch,
        "broker_epoch": req.broker_epoch,
        "delete_partitions": req.delete_partitions,
        "topics": [
            {"name": topic, "partition_indexes": [p for _, p in tps]}
            for topic, tps in group_by_topic(req.partitions, lambda tp: tp[0])
        ],
    }


def stop_replica_request_from_wire(w: Wire) -> StopReplicaRequest:
    return StopReplicaRequest(
        controller_id=w["controller_id"],
        controller_epoch=w["controller_epoch"],
        broker_epoch=w["broker_epoch"],
        delete_partitions=w["delete_partitions"],
        partitions=tuple((t["name"], p) for t in w["topics"] for p in t["partition_indexes"]),
    )


# ---------------------------------------------------------------- ControlledShutdown v0-v2


def controlled_shutdown_request_to_wire(req: ControlledShutdownRequest) -> Wire:
    return {"broker_id": req.broker_id, "broker_epoch": req.broker_epoch}


def controlled_shutdown_request_from_wire(w: Wire) -> ControlledShutdownRequest:
    return ControlledShutdownRequest(w["broker_id"], w.get("broker_epoch", UNKNOWN_EPOCH))


def controlled_shutdown_response_to_wire(resp: ControlledShutdownResponse) -> Wire:
    return {
        "error_code": int(resp.error),
        "remaining_partitions": [
            {"topic_name": t, "partition_index": p} for t, p in resp.remaining
        ],
    }


def controlled_shutdown_response_from_wire(w: Wire) -> ControlledShutdownResponse:
    return ControlledShutdownResponse(
        error_code(w["error_code"]),
        tuple((r["topic_name"], r["partition_index"]) for r in w["remaining_partitions"]),
    )


# ---------------------------------------------------------------- broker responses

PER_PARTITION_APIS = frozenset({"LeaderAndIsr", "StopReplica"})


def controller_response_to_wire(resp: ControllerResponse) -> Wire:
    """LeaderAndIsr / StopReplica: error + partition errors; UpdateMetadata: error only."""
    w: Wire = {"error_code": int(resp.error)}
    if resp.api in PER_PARTITION_APIS:
        w["partition_errors"] = [
            {"topic_name": t, "partition_index": p, "error_code": int(e)}
            for (t, p), e in resp.partition_errors
        ]
    elif resp.partition_errors:
        raise EncodeError(f"{resp.api} responses carry no partition errors")
    return w


def controller_response_from_wire(api: str, w: Wire) -> ControllerResponse:
    errors: tuple[tuple[TopicPartition, ErrorCode], ...] = tuple(
        ((e["topic_name"], e["partition_index"]), error_code(e["error_code"]))
        for e in w.get("partition_errors", ())
    )
    return ControllerResponse(api, error_code(w["error_code"]), errors)
