"""Each controller API and Metadata v8 / ApiVersions v3 against bytes assembled by hand,
field by field, in the order the reference lists them (independent of the schemas)."""

from __future__ import annotations

import struct

from adapters.network.codec.registry import request_schema, response_schema
from adapters.network.codec.wire import decode, encode


def i16(v: int) -> bytes:
    return struct.pack(">h", v)


def i32(v: int) -> bytes:
    return struct.pack(">i", v)


def i64(v: int) -> bytes:
    return struct.pack(">q", v)


def s(v: str) -> bytes:
    return i16(len(v)) + v.encode()


def ints(*vs: int) -> bytes:
    return i32(len(vs)) + b"".join(i32(v) for v in vs)


def check(schema: object, body: dict, expected: bytes) -> None:
    assert encode(schema, body) == expected  # type: ignore[arg-type]
    assert decode(schema, expected) == body  # type: ignore[arg-type]


def test_leader_and_isr_v2() -> None:
    body = {
        "controller_id": 1,
        "controller_epoch": 2,
        "broker_epoch": 3,
        "topic_states": [
            {
                "topic_name": "t",
                "partition_states": [
                    {
                        "partition_index": 0,
                        "controller_epoch": 2,
                        "leader": 1,
                        "leader_epoch": 5,
                        "isr": [1, 2],
                        "zk_version": 7,
                        "replicas": [1, 2, 3],
                        "is_new": True,
                    }
                ],
            }
        ],
        "live_leaders": [{"broker_id": 1, "host_name": "h", "port": 9092}],
    }
    partition = i32(0) + i32(2) + i32(1) + i32(5) + ints(1, 2) + i32(7) + ints(1, 2, 3) + b"\x01"
    expected = (
        i32(1) + i32(2) + i64(3) + i32(1) + s("t") + i32(1) + partition
        + i32(1) + i32(1) + s("h") + i32(9092)
    )  # fmt: skip
    check(request_schema(4, 2), body, expected)
    response = {
        "error_code": 0,
        "partition_errors": [{"topic_name": "t", "partition_index": 0, "error_code": 77}],
    }
    check(response_schema(4, 2), response, i16(0) + i32(1) + s("t") + i32(0) + i16(77))


def test_stop_replica_v1() -> None:
    body = {
        "controller_id": 1,
        "controller_epoch": 2,
        "broker_epoch": 3,
        "delete_partitions": False,
        "topics": [{"name": "t", "partition_indexes": [0, 4]}],
    }
    expected = i32(1) + i32(2) + i64(3) + b"\x00" + i32(1) + s("t") + ints(0, 4)
    check(request_schema(5, 1), body, expected)
    response = {"error_code": 11, "partition_errors": []}
    check(response_schema(5, 1), response, i16(11) + i32(0))


def test_update_metadata_v5_port_before_host() -> None:
    body = {
        "controller_id": 1,
        "controller_epoch": 2,
        "broker_epoch": 3,
        "topic_states": [
            {
                "topic_name": "t",
                "partition_states": [
                    {
                        "partition_index": 1,
                        "controller_epoch": 2,
                        "leader": -2,
                        "leader_epoch": 5,
                        "isr": [1],
                        "zk_version": 7,
                        "replicas": [1, 2],
                        "offline_replicas": [2],
                    }
                ],
            }
        ],
        "live_brokers": [
            {
                "id": 1,
                "endpoints": [
                    {"port": 9092, "host": "h", "listener": "PLAINTEXT", "security_protocol": 0}
                ],
                "rack": None,
            }
        ],
    }
    partition = i32(1) + i32(2) + i32(-2) + i32(5) + ints(1) + i32(7) + ints(1, 2) + ints(2)
    broker = i32(1) + i32(1) + i32(9092) + s("h") + s("PLAINTEXT") + i16(0) + i16(-1)
    expected = i32(1) + i32(2) + i64(3) + i32(1) + s("t") + i32(1) + partition + i32(1) + broker
    check(request_schema(6, 5), body, expected)
    check(response_schema(6, 5), {"error_code": 77}, i16(77))


def test_controlled_shutdown_v0_to_v2() -> None:
    check(request_schema(7, 2), {"broker_id": 1, "broker_epoch": 9}, i32(1) + i64(9))
    for version in (0, 1):
        check(request_schema(7, version), {"broker_id": 1}, i32(1))
    response = {
        "error_code": 0,
        "remaining_partitions": [{"topic_name": "t", "partition_index": 3}],
    }
    for version in (0, 1, 2):
        check(response_schema(7, version), response, i16(0) + i32(1) + s("t") + i32(3))


def test_metadata_v8_request_and_response() -> None:
    request = {
        "topics": [{"name": "t"}],
        "allow_auto_topic_creation": False,
        "include_cluster_authorized_operations": True,
        "include_topic_authorized_operations": False,
    }
    check(request_schema(3, 8), request, i32(1) + s("t") + b"\x00\x01\x00")
    response = {
        "throttle_time_ms": 0,
        "brokers": [{"node_id": 1, "host": "h", "port": 9092, "rack": "r"}],
        "cluster_id": None,
        "controller_id": 1,
        "topics": [
            {
                "error_code": 0,
                "name": "t",
                "is_internal": False,
                "partitions": [
                    {
                        "error_code": 0,
                        "partition_index": 0,
                        "leader_id": 1,
                        "leader_epoch": 3,
                        "replica_nodes": [1, 2],
                        "isr_nodes": [1],
                        "offline_replicas": [2],
                    }
                ],
                "topic_authorized_operations": -(2**31),
            }
        ],
        "cluster_authorized_operations": -(2**31),
    }
    partition = i16(0) + i32(0) + i32(1) + i32(3) + ints(1, 2) + ints(1) + ints(2)
    topic = i16(0) + s("t") + b"\x00" + i32(1) + partition + i32(-(2**31))
    expected = (
        i32(0) + i32(1) + i32(1) + s("h") + i32(9092) + s("r")
        + i16(-1) + i32(1) + i32(1) + topic + i32(-(2**31))
    )  # fmt: skip
    check(response_schema(3, 8), response, expected)


def test_metadata_v0_response() -> None:
    response = {
        "brokers": [{"node_id": 1, "host": "h", "port": 9092}],
        "topics": [{"error_code": 3, "name": "t", "partitions": []}],
    }
    expected = i32(1) + i32(1) + s("h") + i32(9092) + i32(1) + i16(3) + s("t") + i32(0)
    check(response_schema(3, 0), response, expected)


def test_api_versions_v3_response_is_flexible() -> None:
    response = {
        "error_code": 0,
        "api_keys": [{"api_key": 18, "min_version": 0, "max_version": 3, "tagged_fields": {}}],
        "throttle_time_ms": 0,
        "tagged_fields": {},
    }
    expected = i16(0) + b"\x02" + i16(18) + i16(0) + i16(3) + b"\x00" + i32(0) + b"\x00"
    check(response_schema(18, 3), response, expected)
    v1 = {"error_code": 0, "api_keys": [], "throttle_time_ms": 5}
    check(response_schema(18, 1), v1, i16(0) + i32(0) + i32(5))
    check(response_schema(18, 2), v1, i16(0) + i32(0) + i32(5))
