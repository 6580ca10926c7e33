"""The admin APIs a KRaft broker serves, against kafka-python 3.x (the client the integration
tests drive; ``kafka.protocol.admin``, generated at import from Kafka's JSON schemas), for
every version both serve:

- a request our codec writes (from a hypothesis-drawn ``fsm`` value, through
  ``kraft_convert`` and ``kraft_frames``) is read by kafka-python with its header, written back
  by kafka-python to the very same frame, and what kafka-python read converts to the same value;
- a response we write is read by kafka-python, written back to the same body bytes, and what
  it read converts to the value a client of that version sees.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.protocol import admin as kp
from kraft_strategies import REQUESTS, RESPONSES, K, seen_at

from adapters.network.codec import kraft_convert, kraft_frames
from adapters.network.codec.kraft_registry import BROKER_SERVED, api_name

CLASSES: dict[int, tuple[Any, Any]] = {
    K.CREATE_TOPICS: (kp.CreateTopicsRequest, kp.CreateTopicsResponse),
    K.DELETE_TOPICS: (kp.DeleteTopicsRequest, kp.DeleteTopicsResponse),
    K.CREATE_PARTITIONS: (kp.CreatePartitionsRequest, kp.CreatePartitionsResponse),
    K.ELECT_LEADERS: (kp.ElectLeadersRequest, kp.ElectLeadersResponse),
    K.ALTER_PARTITION_REASSIGNMENTS: (kp.AlterPartitionReassignmentsRequest,
                                      kp.AlterPartitionReassignmentsResponse),
    K.LIST_PARTITION_REASSIGNMENTS: (kp.ListPartitionReassignmentsRequest,
                                     kp.ListPartitionReassignmentsResponse),
    K.DESCRIBE_CLUSTER: (kp.DescribeClusterRequest, kp.DescribeClusterResponse),
}
CASES = [(key, v) for key, (lo, hi) in BROKER_SERVED.items() if key in CLASSES
         for v in range(max(lo, CLASSES[key][0].min_version),
                        min(hi, CLASSES[key][0].max_version) + 1)]
IDS = [f"{api_name(k)}-v{v}" for k, v in CASES]
EXAMPLES = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def ours(value: Any) -> Any:
    """kafka-python's ``to_dict()`` in our wire dict's terms: UUIDs as 16 bytes (the zero
    UUID, which kafka-python reads as None, too)."""
    if isinstance(value, dict):
        return {k: bytes(16) if k == "topic_id" and v is None else ours(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [ours(v) for v in value]
    if isinstance(value, str) and len(value) == 36 and value.count("-") == 4:
        try:
            return uuid.UUID(value).bytes
        except ValueError:
            return value
    if isinstance(value, uuid.UUID):
        return value.bytes
    return value


def test_every_admin_api_is_covered_at_some_version() -> None:
    assert {k for k, _ in CASES} == set(CLASSES)
    assert set(BROKER_SERVED) - set(CLASSES) == {K.UNREGISTER_BROKER}  # not a kafka-python API


@pytest.mark.parametrize(("api_key", "version"), CASES, ids=IDS)
@EXAMPLES
@given(data=st.data(), correlation_id=st.integers(0, 2**31 - 1))
def test_our_requests_are_kafka_pythons(api_key: int, version: int, data: st.DataObject,
                                        correlation_id: int) -> None:
    value = data.draw(REQUESTS[api_key])
    expected = seen_at(api_key, version, value, False)
    if expected is None:  # this version cannot say it (DeleteTopics by id below v6...)
        return
    frame = kraft_frames.encode_request(api_key, version, correlation_id, "kcontrol",
                                        kraft_convert.request_to_wire(api_key, version, value))
    request_class, _ = CLASSES[api_key]
    theirs = request_class.decode(frame, version=version, header=True, framed=True)
    assert (theirs.header.request_api_key, theirs.header.request_api_version,
            theirs.header.correlation_id, theirs.header.client_id) == (
        api_key, version, correlation_id, "kcontrol")
    assert bytes(theirs.encode(version=version, header=True, framed=True)) == frame
    assert kraft_convert.request_from_wire(api_key, version, ours(theirs.to_dict())) == expected


@pytest.mark.parametrize(("api_key", "version"), CASES, ids=IDS)
@EXAMPLES
@given(data=st.data(), correlation_id=st.integers(0, 2**31 - 1))
def test_our_responses_read_in_kafka_python(api_key: int, version: int, data: st.DataObject,
                                            correlation_id: int) -> None:
    value = data.draw(RESPONSES[api_key])
    expected = seen_at(api_key, version, value, True)
    if expected is None:
        return
    body = kraft_convert.response_to_wire(api_key, version, value)
    frame = kraft_frames.encode_response(api_key, version, correlation_id, body)
    _, response_class = CLASSES[api_key]
    theirs = response_class.decode(frame, version=version, header=True, framed=True)
    assert theirs.header.correlation_id == correlation_id
    # (encode(version=...) of a response read with its header trips over kafka-python's
    # ResponseHeader: the version it was read at is kept)
    assert theirs.version == version
    assert bytes(theirs.encode()) == kraft_frames.encode_body(
        api_key, version, body, response=True)
    assert kraft_convert.response_from_wire(api_key, version, ours(theirs.to_dict())) == expected
