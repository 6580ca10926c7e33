"""The quorum messages through the converter and the frames and back: every value of every
message type survives (hypothesis), the wire carries ``__cluster_metadata`` 0 and the
cluster id, and what is not about that partition, not a known error code or not whole is
read as the converter documents (a ``DecodeError`` naming the API and field, or
``UNKNOWN_SERVER_ERROR``)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from raftwire_strategies import EPOCH, ERRORS, NODE, OFFSET, REPLICA, messages
from raftwire_stub_records import STUB_RECORDS, converter

from adapters.network.codec import raft_frames
from adapters.network.codec.errors import DecodeError, EncodeError
from adapters.network.codec.raft_convert import RaftConverter, api_of, source_of
from adapters.network.codec.raft_registry import RAFT_SUPPORTED, SEND_VERSIONS, RaftApiKey
from fsm.errors import ErrorCode
from fsm.raft.messages import (
    NO_LEADER,
    BeginQuorumEpochRequest,
    DescribeQuorumRequest,
    DescribeQuorumResponse,
    EndQuorumEpochRequest,
    FetchRequest,
    FetchResponse,
    FetchSnapshotRequest,
    FetchSnapshotResponse,
    OffsetAndEpoch,
    ReplicaState,
    VoteRequest,
    VoteResponse,
)

CONVERTER = converter("cluster-a")


def round_trip(message: Any, version: int | None = None,
               c: RaftConverter = CONVERTER) -> tuple[Any, bytes]:
    key, is_request, body = c.to_wire(message)
    v = SEND_VERSIONS[key] if version is None else version
    if is_request:
        frame = raft_frames.encode_request(key, v, 41, "raft-1", body)
        request = raft_frames.parse_request(frame[4:])
        assert (request.api_key, request.api_version) == (key, v)
        assert request.header.correlation_id == 41 and request.header.client_id == "raft-1"
        return c.from_wire(key, True, request.body), frame
    frame = raft_frames.encode_response(key, v, 41, body)
    correlation, decoded = raft_frames.decode_response(key, v, frame[4:])
    assert correlation == 41 == raft_frames.peek_correlation_id(frame[4:])
    return c.from_wire(key, False, decoded), frame


@settings(max_examples=300, deadline=None)
@given(messages())
def test_every_message_survives_the_wire(message: Any) -> None:
    back, _ = round_trip(message)
    assert back == message


@settings(max_examples=100, deadline=None)
@given(st.just(DescribeQuorumRequest()) | st.builds(
    DescribeQuorumResponse, ERRORS, NODE, EPOCH, OFFSET, st.lists(REPLICA, max_size=3).map(tuple),
    st.lists(REPLICA, max_size=3).map(tuple)))
def test_describe_quorum_v0_drops_only_the_v1_times(message: Any) -> None:
    back, _ = round_trip(message, version=0)
    if isinstance(message, DescribeQuorumResponse):
        old = tuple(ReplicaState(r.replica_id, r.log_end_offset) for r in message.current_voters)
        assert back.current_voters == old
    else:
        assert back == message


def test_the_versions_sent_and_served() -> None:
    assert SEND_VERSIONS == {1: 12, 52: 0, 53: 0, 54: 0, 55: 1, 59: 0}
    assert RAFT_SUPPORTED[55] == (0, 1)


def test_the_wire_names_the_metadata_partition_and_the_cluster_id() -> None:
    for message, key in [(VoteRequest(1, 2, 0, 0), "topic_name"),
                         (FetchRequest(2, 1, 0, 0), "topic"),
                         (FetchSnapshotRequest(2, 1, OffsetAndEpoch(5, 1), 0), "name")]:
        api, _, body = CONVERTER.to_wire(message)
        [topic] = body["topics"]
        assert topic[key] == "__cluster_metadata"
        assert [p.get("partition", p.get("partition_index")) for p in topic["partitions"]] == [0]
        _, frame = round_trip(message)
        assert b"cluster-a" in frame and b"__cluster_metadata" in frame
        parsed = raft_frames.parse_request(frame[4:])
        assert CONVERTER.cluster_id_of(api, parsed.body) == "cluster-a"
    no_cluster = converter(None)
    api, _, body = no_cluster.to_wire(FetchRequest(2, 1, 0, 0))
    assert body["tagged_fields"] == {}  # a null cluster id is the default: not written
    assert no_cluster.cluster_id_of(api, body) is None


def test_fetch_response_tags_are_written_only_when_set() -> None:
    plain = FetchResponse(ErrorCode.NONE, 4, 2, 10, 0)
    _, _, body = CONVERTER.to_wire(plain)
    assert set(body["responses"][0]["partitions"][0]["tagged_fields"]) == {1}  # current leader
    unknown = FetchResponse(ErrorCode.NONE, -1, NO_LEADER, 10, 0)
    _, _, body = CONVERTER.to_wire(unknown)
    assert body["responses"][0]["partitions"][0]["tagged_fields"] == {}
    assert round_trip(unknown)[0] == unknown
    both = FetchResponse(ErrorCode.NONE, 4, 2, 10, 0, (), OffsetAndEpoch(7, 3),
                         OffsetAndEpoch(9, 2))
    _, _, body = CONVERTER.to_wire(both)
    assert set(body["responses"][0]["partitions"][0]["tagged_fields"]) == {0, 1, 2}
    assert round_trip(both)[0] == both


def test_sources_named_by_requests() -> None:
    assert source_of(VoteRequest(1, 7, 0, 0)) == 7
    assert source_of(BeginQuorumEpochRequest(1, 8)) == 8
    assert source_of(EndQuorumEpochRequest(1, 9, ())) == 9
    assert source_of(FetchRequest(4, 1, 0, 0)) == 4
    assert source_of(FetchRequest(-1, 1, 0, 0)) is None  # a consumer's replica id
    assert source_of(FetchSnapshotRequest(5, 1, OffsetAndEpoch(0, 0), 0)) == 5
    assert source_of(DescribeQuorumRequest()) is None
    assert api_of(VoteResponse(ErrorCode.NONE, 1, 1, True)) == (RaftApiKey.VOTE, False)
    with pytest.raises(TypeError, match="not a quorum message"):
        api_of(object())


def vote_body(**partition: Any) -> dict[str, Any]:
    _, _, body = CONVERTER.to_wire(VoteRequest(3, 1, 2, 10))
    body["topics"][0]["partitions"][0].update(partition)
    return body


def test_another_partition_or_topic_is_refused_by_name() -> None:
    with pytest.raises(DecodeError, match=r"VoteRequest: topics\[0\].partitions: .* got \[1\]"):
        CONVERTER.from_wire(52, True, vote_body(partition_index=1))
    body = vote_body()
    body["topics"][0]["topic_name"] = "other"
    with pytest.raises(DecodeError, match=r"VoteRequest: topics: .*'other'"):
        CONVERTER.from_wire(52, True, body)
    body["topics"] = []
    with pytest.raises(DecodeError, match="VoteRequest: topics"):
        CONVERTER.from_wire(52, True, body)


def test_unknown_error_codes_and_top_level_errors() -> None:
    _, _, body = CONVERTER.to_wire(VoteResponse(ErrorCode.NONE, 3, 1, True))
    body["topics"][0]["partitions"][0]["error_code"] = 9999
    assert CONVERTER.from_wire(52, False, body).error == ErrorCode.UNKNOWN_SERVER_ERROR
    top_only = {"error_code": int(ErrorCode.INCONSISTENT_CLUSTER_ID), "topics": []}
    assert CONVERTER.from_wire(52, False, top_only) == VoteResponse(
        ErrorCode.INCONSISTENT_CLUSTER_ID, -1, NO_LEADER, False)
    body["error_code"] = int(ErrorCode.BROKER_NOT_AVAILABLE)  # top-level wins
    assert CONVERTER.from_wire(52, False, body).error == ErrorCode.BROKER_NOT_AVAILABLE
    fetch_top = {"error_code": int(ErrorCode.INCONSISTENT_CLUSTER_ID), "responses": []}
    assert CONVERTER.from_wire(1, False, fetch_top).error == ErrorCode.INCONSISTENT_CLUSTER_ID


def test_truncated_frames_name_the_api_and_the_field() -> None:
    _, frame = round_trip(VoteRequest(3, 1, 2, 10))
    with pytest.raises(DecodeError, match=r"^VoteRequest v0: topics\[0\]\.partitions\[0\]"):
        raft_frames.parse_request(frame[4:-4])
    with pytest.raises(DecodeError, match=r"^VoteRequest v0: 1 trailing bytes"):
        raft_frames.parse_request(frame[4:] + b"\0")
    # no tags (leader unknown), no records: the last 10 bytes are 1 byte of log_start_offset,
    # aborted_transactions, preferred_read_replica, records and three tag buffers
    _, frame = round_trip(FetchResponse(ErrorCode.NONE, -1, NO_LEADER, 10, 0))
    cut = frame[4:-10]
    with pytest.raises(DecodeError, match=r"^FetchResponse v12: responses\[0\]\.partitions\[0\]"
                                          r"\.log_start_offset: truncated"):
        raft_frames.decode_response(1, 12, cut)
    with pytest.raises(DecodeError, match="FetchSnapshotRequest v0: request header"):
        raft_frames.parse_request(b"\x00\x3b\x00\x00\x00\x00")
    with pytest.raises(DecodeError, match="METADATA|api key 3"):
        raft_frames.parse_request(b"\x00\x03\x00\x08\x00\x00\x00\x01")
    with pytest.raises(DecodeError, match="VOTE v1 is not served"):
        raft_frames.parse_request(b"\x00\x34\x00\x01\x00\x00\x00\x01\xff\xff\x00")


def test_a_bad_tag_or_bad_records_name_their_field() -> None:
    _, _, body = CONVERTER.to_wire(FetchResponse(ErrorCode.NONE, 4, 2, 10, 0))
    partition = body["responses"][0]["partitions"][0]
    partition["tagged_fields"] = {1: b"\x00\x01"}  # current_leader cut short
    with pytest.raises(DecodeError, match="current_leader"):
        CONVERTER.from_wire(1, False, body)
    partition["tagged_fields"] = {}
    partition["records"] = b"not a batch ["
    with pytest.raises(DecodeError, match=r"FetchResponse: responses\[0\]\.partitions\[0\]\.records"):
        CONVERTER.from_wire(1, False, body)


def test_whatever_the_records_codec_raises_is_a_decode_error() -> None:
    def refuse(data: bytes) -> Any:
        raise ValueError("batch at byte 0: CRC-32C mismatch")  # raft_log's MalformedBatch is one

    c = RaftConverter(type(STUB_RECORDS)(STUB_RECORDS.encode, refuse))
    from fsm.raft.messages import Batch

    _, _, body = c.to_wire(FetchResponse(ErrorCode.NONE, 1, 1, 0, 0, (Batch(0, 1, (b"x",)),)))
    with pytest.raises(DecodeError, match=r"records: ValueError: batch at byte 0: CRC-32C"):
        c.from_wire(1, False, body)


def test_unknown_tags_are_ignored() -> None:
    _, _, body = CONVERTER.to_wire(FetchResponse(ErrorCode.NONE, 4, 2, 10, 0))
    body["responses"][0]["partitions"][0]["tagged_fields"][9] = b"future"
    assert CONVERTER.from_wire(1, False, body) == FetchResponse(ErrorCode.NONE, 4, 2, 10, 0)


def test_a_snapshot_chunk_must_be_bytes() -> None:
    with pytest.raises(EncodeError, match="chunk must be bytes"):
        CONVERTER.to_wire(FetchSnapshotResponse(ErrorCode.NONE, 1, 1, OffsetAndEpoch(1, 1),
                                                chunk=("records",)))
    empty = FetchSnapshotResponse(ErrorCode.NONE, 1, 1, OffsetAndEpoch(1, 1))
    assert round_trip(empty)[0] == FetchSnapshotResponse(
        ErrorCode.NONE, 1, 1, OffsetAndEpoch(1, 1), chunk=b"")


def test_records_go_through_the_records_codec() -> None:
    seen: list[Any] = []

    def encode(batches: Any) -> bytes:
        seen.append(batches)
        return STUB_RECORDS.encode(batches)

    c = RaftConverter(type(STUB_RECORDS)(encode, STUB_RECORDS.decode))
    from fsm.raft.messages import Batch

    message = FetchResponse(ErrorCode.NONE, 1, 1, 0, 0, (Batch(0, 1, (b"x",)),))
    _, _, body = c.to_wire(message)
    assert seen == [message.batches]
    assert body["responses"][0]["partitions"][0]["records"] == STUB_RECORDS.encode(
        message.batches)


def test_brokers_do_not_advertise_the_quorum_apis() -> None:
    """The quorum's APIs have their own table: what a broker's ApiVersions lists
    (``registry.SUPPORTED``) names none of them, and the broker's parser refuses them."""
    from adapters.network.codec import dispatch, registry

    assert not set(registry.SUPPORTED) & set(RAFT_SUPPORTED)
    _, frame = round_trip(VoteRequest(3, 1, 2, 10))
    rejected = dispatch.parse_request(frame[4:])
    assert isinstance(rejected, dispatch.Rejected) and rejected.action is dispatch.Action.CLOSE


def test_parse_voters() -> None:
    from adapters.raft_transport import parse_voters

    assert parse_voters("1@localhost:9093, 2@10.0.0.2:9094,3@[::1]:9095") == {
        1: ("localhost", 9093), 2: ("10.0.0.2", 9094), 3: ("::1", 9095)}
    for bad in ("", "1@host", "x@host:1", "1@host:0", "1@:9093", "1@h:1,1@h:2", "1host:9"):
        with pytest.raises(ValueError, match="controller.quorum.voters"):
            parse_voters(bad)
