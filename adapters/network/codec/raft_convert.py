"""``fsm.raft.messages`` values <-> the quorum APIs' wire dicts.

Every quorum API carries the one partition ``__cluster_metadata`` 0 inside a topic array;
:class:`RaftConverter` writes exactly that and, reading, requires exactly that (anything else
is a :class:`DecodeError` naming the API and field: this node serves no other partition).
Batches travel as the Fetch partition's ``records`` bytes, written and read by a
:class:`RecordsCodec` (Kafka's record batch v2, ``adapters.raft_log``; tests pass a stub);
any exception its ``decode`` raises becomes a ``DecodeError`` naming the field.
Error codes are ``fsm.errors.ErrorCode``; a code it does not know reads as
``UNKNOWN_SERVER_ERROR``, as Kafka's clients read one. A response's error is its top-level
error when there is one (Kafka's raft sets it for a request it could not take at all, e.g. a
wrong cluster id), else the partition's; a response with no partition reads its leader as
unknown (epoch -1, ``NO_LEADER``).

The cluster id is written on the requests that carry it (Vote, BeginQuorumEpoch,
EndQuorumEpoch, and as tag 0 of Fetch and FetchSnapshot) and handed back by
:meth:`RaftConverter.cluster_id_of` for the transport to check (:func:`error_body` answers a
mismatch); the core never sees it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from adapters.network.codec import raft_tags
from adapters.network.codec.apis import fetch, fetch_snapshot
from adapters.network.codec.errors import DecodeError, EncodeError
from adapters.network.codec.raft_registry import RaftApiKey
from fsm.errors import ErrorCode
from fsm.raft.messages import (
    NO_LEADER,
    Batch,
    BeginQuorumEpochRequest,
    BeginQuorumEpochResponse,
    DescribeQuorumRequest,
    DescribeQuorumResponse,
    EndQuorumEpochRequest,
    EndQuorumEpochResponse,
    FetchRequest,
    FetchResponse,
    FetchSnapshotRequest,
    FetchSnapshotResponse,
    OffsetAndEpoch,
    ReplicaState,
    VoteRequest,
    VoteResponse,
)

METADATA_TOPIC = "__cluster_metadata"
METADATA_PARTITION = 0

Body = dict[str, Any]


@dataclass(frozen=True, slots=True)
class RecordsCodec:
    """How batches become a Fetch response's ``records`` bytes and back."""

    encode: Callable[[Sequence[Batch]], bytes]
    decode: Callable[[bytes], Sequence[Batch]]


REQUEST_TYPES: dict[type, RaftApiKey] = {
    VoteRequest: RaftApiKey.VOTE,
    BeginQuorumEpochRequest: RaftApiKey.BEGIN_QUORUM_EPOCH,
    EndQuorumEpochRequest: RaftApiKey.END_QUORUM_EPOCH,
    FetchRequest: RaftApiKey.FETCH,
    FetchSnapshotRequest: RaftApiKey.FETCH_SNAPSHOT,
    DescribeQuorumRequest: RaftApiKey.DESCRIBE_QUORUM,
}
RESPONSE_TYPES: dict[type, RaftApiKey] = {
    VoteResponse: RaftApiKey.VOTE,
    BeginQuorumEpochResponse: RaftApiKey.BEGIN_QUORUM_EPOCH,
    EndQuorumEpochResponse: RaftApiKey.END_QUORUM_EPOCH,
    FetchResponse: RaftApiKey.FETCH,
    FetchSnapshotResponse: RaftApiKey.FETCH_SNAPSHOT,
    DescribeQuorumResponse: RaftApiKey.DESCRIBE_QUORUM,
}


def api_of(message: object) -> tuple[RaftApiKey, bool]:
    """(api key, is a request) of a quorum message; ``TypeError`` for anything else."""
    key = REQUEST_TYPES.get(type(message))
    if key is not None:
        return key, True
    key = RESPONSE_TYPES.get(type(message))
    if key is not None:
        return key, False
    raise TypeError(f"not a quorum message: {message!r}")


def source_of(request: object) -> int | None:
    """The node id a request names as its sender (candidate, leader, replica), if any."""
    match request:
        case VoteRequest(candidate_id=node):
            return node
        case BeginQuorumEpochRequest(leader_id=node) | EndQuorumEpochRequest(leader_id=node):
            return node
        case FetchRequest(replica_id=node) | FetchSnapshotRequest(replica_id=node):
            return node if node >= 0 else None
    return None


def error_body(api_key: int, error: ErrorCode) -> Body:
    """A response body of ``api_key`` that is only a top-level error (no partition): Kafka's
    answer to a request it could not take at all, e.g. ``INCONSISTENT_CLUSTER_ID``."""
    topics_key = "responses" if api_key == RaftApiKey.FETCH else "topics"
    return {"error_code": int(error), topics_key: []}


def error_code(code: int) -> ErrorCode:
    try:
        return ErrorCode(code)
    except ValueError:
        return ErrorCode.UNKNOWN_SERVER_ERROR


class RaftConverter:
    """Converts both ways. ``fetch_max_wait_ms`` and ``fetch_max_bytes`` fill the Fetch and
    FetchSnapshot request fields the core does not choose (Kafka's raft client: 500 ms and
    8 MiB)."""

    def __init__(
        self,
        records: RecordsCodec,
        cluster_id: str | None = None,
        fetch_max_wait_ms: int = 500,
        fetch_max_bytes: int = 8 * 1024 * 1024,
    ) -> None:
        self.records = records
        self.cluster_id = cluster_id
        self.fetch_max_wait_ms = fetch_max_wait_ms
        self.fetch_max_bytes = fetch_max_bytes

    # ------------------------------------------------------------------ to the wire
    def to_wire(self, message: object) -> tuple[RaftApiKey, bool, Body]:
        """(api key, is a request, wire body) of a quorum message."""
        key, is_request = api_of(message)
        build = _TO_WIRE[type(message)]
        return key, is_request, build(self, message)

    def _vote_request(self, m: VoteRequest) -> Body:
        return {"cluster_id": self.cluster_id, "topics": _one_partition("topic_name", {
            "partition_index": METADATA_PARTITION,
            "candidate_epoch": m.candidate_epoch,
            "candidate_id": m.candidate_id,
            "last_offset_epoch": m.last_offset_epoch,
            "last_offset": m.last_offset,
        })}

    def _vote_response(self, m: VoteResponse) -> Body:
        return {"error_code": int(ErrorCode.NONE), "topics": _one_partition("topic_name", {
            "partition_index": METADATA_PARTITION,
            "error_code": int(m.error),
            "leader_id": m.leader_id,
            "leader_epoch": m.leader_epoch,
            "vote_granted": m.vote_granted,
        })}

    def _begin_request(self, m: BeginQuorumEpochRequest) -> Body:
        return {"cluster_id": self.cluster_id, "topics": _one_partition("topic_name", {
            "partition_index": METADATA_PARTITION,
            "leader_id": m.leader_id,
            "leader_epoch": m.leader_epoch,
        })}

    def _end_request(self, m: EndQuorumEpochRequest) -> Body:
        return {"cluster_id": self.cluster_id, "topics": _one_partition("topic_name", {
            "partition_index": METADATA_PARTITION,
            "leader_id": m.leader_id,
            "leader_epoch": m.leader_epoch,
            "preferred_successors": list(m.preferred_successors),
        })}

    def _epoch_response(self, m: BeginQuorumEpochResponse | EndQuorumEpochResponse) -> Body:
        return {"error_code": int(ErrorCode.NONE), "topics": _one_partition("topic_name", {
            "partition_index": METADATA_PARTITION,
            "error_code": int(m.error),
            "leader_id": m.leader_id,
            "leader_epoch": m.leader_epoch,
        })}

    def _fetch_request(self, m: FetchRequest) -> Body:
        body: Body = {
            "replica_id": m.replica_id,
            "max_wait_ms": self.fetch_max_wait_ms,
            "min_bytes": 0,
            "max_bytes": self.fetch_max_bytes,
            "topics": _one_partition("topic", {
                "partition": METADATA_PARTITION,
                "current_leader_epoch": m.current_leader_epoch,
                "fetch_offset": m.fetch_offset,
                "last_fetched_epoch": m.last_fetched_epoch,
                "log_start_offset": -1,
                "partition_max_bytes": self.fetch_max_bytes,
            }),
        }
        body["tagged_fields"] = raft_tags.pack(fetch.REQUEST_TAGS, {"cluster_id": self.cluster_id})
        return body

    def _fetch_response(self, m: FetchResponse) -> Body:
        named: Body = {"current_leader": {"leader_id": m.leader_id, "leader_epoch": m.leader_epoch}}
        if m.diverging_epoch is not None:
            named["diverging_epoch"] = {
                "epoch": m.diverging_epoch.epoch, "end_offset": m.diverging_epoch.offset
            }
        if m.snapshot_id is not None:
            named["snapshot_id"] = {
                "end_offset": m.snapshot_id.offset, "epoch": m.snapshot_id.epoch
            }
        partition = {
            "partition_index": METADATA_PARTITION,
            "error_code": int(m.error),
            "high_watermark": m.high_watermark,
            "last_stable_offset": -1,
            "log_start_offset": m.log_start_offset,
            "aborted_transactions": None,
            "preferred_read_replica": -1,
            "records": self.records.encode(m.batches) if m.batches else b"",
            "tagged_fields": raft_tags.pack(fetch.PARTITION_TAGS, named),
        }
        return {"error_code": int(ErrorCode.NONE), "responses": _one_partition("topic", partition)}

    def _fetch_snapshot_request(self, m: FetchSnapshotRequest) -> Body:
        body: Body = {
            "replica_id": m.replica_id,
            "max_bytes": self.fetch_max_bytes,
            "topics": _one_partition("name", {
                "partition": METADATA_PARTITION,
                "current_leader_epoch": m.current_leader_epoch,
                "snapshot_id": _snapshot_id(m.snapshot_id),
                "position": m.position,
            }),
        }
        body["tagged_fields"] = raft_tags.pack(
            fetch_snapshot.REQUEST_TAGS, {"cluster_id": self.cluster_id}
        )
        return body

    def _fetch_snapshot_response(self, m: FetchSnapshotResponse) -> Body:
        chunk = b"" if m.chunk is None else m.chunk
        if not isinstance(chunk, bytes | bytearray | memoryview):
            raise EncodeError(f"FetchSnapshotResponse chunk must be bytes, got {type(chunk)}")
        named = {"current_leader": {"leader_id": m.leader_id, "leader_epoch": m.leader_epoch}}
        return {"error_code": int(ErrorCode.NONE), "topics": _one_partition("name", {
            "index": METADATA_PARTITION,
            "error_code": int(m.error),
            "snapshot_id": _snapshot_id(m.snapshot_id),
            "size": m.size,
            "position": m.position,
            "unaligned_records": bytes(chunk),
            "tagged_fields": raft_tags.pack(fetch_snapshot.PARTITION_TAGS, named),
        })}

    def _describe_request(self, m: DescribeQuorumRequest) -> Body:
        return {"topics": _one_partition("topic_name", {"partition_index": METADATA_PARTITION})}

    def _describe_response(self, m: DescribeQuorumResponse) -> Body:
        return {"error_code": int(ErrorCode.NONE), "topics": _one_partition("topic_name", {
            "partition_index": METADATA_PARTITION,
            "error_code": int(m.error),
            "leader_id": m.leader_id,
            "leader_epoch": m.leader_epoch,
            "high_watermark": m.high_watermark,
            "current_voters": [_replica(r) for r in m.current_voters],
            "observers": [_replica(r) for r in m.observers],
        })}

    # ------------------------------------------------------------------ from the wire
    def from_wire(self, api_key: int, is_request: bool, body: Mapping[str, Any]) -> object:
        """The quorum message of a decoded wire body; :class:`DecodeError` if the body is not
        about ``__cluster_metadata`` 0 alone."""
        try:
            parse = (_REQUEST_FROM_WIRE if is_request else _RESPONSE_FROM_WIRE)[api_key]
        except KeyError:
            raise DecodeError(f"api key {api_key} is not a quorum API") from None
        return parse(self, body)

    def cluster_id_of(self, api_key: int, body: Mapping[str, Any]) -> str | None:
        """The cluster id a decoded request carries (None: it carries none)."""
        if api_key in (RaftApiKey.FETCH, RaftApiKey.FETCH_SNAPSHOT):
            tags = fetch.REQUEST_TAGS if api_key == RaftApiKey.FETCH else fetch_snapshot.REQUEST_TAGS
            named = raft_tags.unpack(tags, body.get("tagged_fields") or {}, "request")
            return named["cluster_id"]  # type: ignore[no-any-return]
        return body.get("cluster_id")

    def _vote_request_in(self, body: Mapping[str, Any]) -> VoteRequest:
        p = _the_partition("VoteRequest", body, "topics", "topic_name", "partition_index")
        return VoteRequest(
            p["candidate_epoch"], p["candidate_id"], p["last_offset_epoch"], p["last_offset"]
        )

    def _vote_response_in(self, body: Mapping[str, Any]) -> VoteResponse:
        p, error = _response_partition("VoteResponse", body, "topics", "topic_name",
                                       "partition_index")
        if p is None:
            return VoteResponse(error, -1, NO_LEADER, False)
        return VoteResponse(error, p["leader_epoch"], p["leader_id"], p["vote_granted"])

    def _begin_request_in(self, body: Mapping[str, Any]) -> BeginQuorumEpochRequest:
        p = _the_partition("BeginQuorumEpochRequest", body, "topics", "topic_name",
                           "partition_index")
        return BeginQuorumEpochRequest(p["leader_epoch"], p["leader_id"])

    def _begin_response_in(self, body: Mapping[str, Any]) -> BeginQuorumEpochResponse:
        p, error = _response_partition("BeginQuorumEpochResponse", body, "topics", "topic_name",
                                       "partition_index")
        if p is None:
            return BeginQuorumEpochResponse(error, -1, NO_LEADER)
        return BeginQuorumEpochResponse(error, p["leader_epoch"], p["leader_id"])

    def _end_request_in(self, body: Mapping[str, Any]) -> EndQuorumEpochRequest:
        p = _the_partition("EndQuorumEpochRequest", body, "topics", "topic_name",
                           "partition_index")
        return EndQuorumEpochRequest(
            p["leader_epoch"], p["leader_id"], tuple(p["preferred_successors"])
        )

    def _end_response_in(self, body: Mapping[str, Any]) -> EndQuorumEpochResponse:
        p, error = _response_partition("EndQuorumEpochResponse", body, "topics", "topic_name",
                                       "partition_index")
        if p is None:
            return EndQuorumEpochResponse(error, -1, NO_LEADER)
        return EndQuorumEpochResponse(error, p["leader_epoch"], p["leader_id"])

    def _fetch_request_in(self, body: Mapping[str, Any]) -> FetchRequest:
        p = _the_partition("FetchRequest", body, "topics", "topic", "partition")
        return FetchRequest(
            body["replica_id"], p["current_leader_epoch"], p["fetch_offset"],
            p["last_fetched_epoch"],
        )

    def _fetch_response_in(self, body: Mapping[str, Any]) -> FetchResponse:
        p, error = _response_partition("FetchResponse", body, "responses", "topic",
                                       "partition_index")
        if p is None:
            return FetchResponse(error, -1, NO_LEADER, -1, -1)
        named = raft_tags.unpack(
            fetch.PARTITION_TAGS, p.get("tagged_fields") or {}, "FetchResponse partition"
        )
        leader = named["current_leader"]
        diverging = named["diverging_epoch"]
        snapshot = named["snapshot_id"]
        raw = p["records"]
        try:
            batches = tuple(self.records.decode(raw)) if raw else ()
        except Exception as e:  # whatever the records codec raises on bad bytes
            raise DecodeError(f"FetchResponse: responses[0].partitions[0].records: "
                              f"{type(e).__name__}: {e}") from e
        return FetchResponse(
            error,
            leader["leader_epoch"],
            leader["leader_id"],
            p["high_watermark"],
            p["log_start_offset"],
            batches,
            None if diverging == fetch.PARTITION_TAGS[0].default
            else OffsetAndEpoch(diverging["end_offset"], diverging["epoch"]),
            None if snapshot == fetch.PARTITION_TAGS[2].default
            else OffsetAndEpoch(snapshot["end_offset"], snapshot["epoch"]),
        )

    def _fetch_snapshot_request_in(self, body: Mapping[str, Any]) -> FetchSnapshotRequest:
        p = _the_partition("FetchSnapshotRequest", body, "topics", "name", "partition")
        sid = p["snapshot_id"]
        return FetchSnapshotRequest(
            body["replica_id"], p["current_leader_epoch"],
            OffsetAndEpoch(sid["end_offset"], sid["epoch"]), p["position"],
        )

    def _fetch_snapshot_response_in(self, body: Mapping[str, Any]) -> FetchSnapshotResponse:
        p, error = _response_partition("FetchSnapshotResponse", body, "topics", "name", "index")
        if p is None:
            return FetchSnapshotResponse(error, -1, NO_LEADER, OffsetAndEpoch(-1, -1))
        named = raft_tags.unpack(
            fetch_snapshot.PARTITION_TAGS, p.get("tagged_fields") or {},
            "FetchSnapshotResponse partition",
        )
        leader = named["current_leader"]
        sid = p["snapshot_id"]
        return FetchSnapshotResponse(
            error, leader["leader_epoch"], leader["leader_id"],
            OffsetAndEpoch(sid["end_offset"], sid["epoch"]), p["size"], p["position"],
            p["unaligned_records"],
        )

    def _describe_request_in(self, body: Mapping[str, Any]) -> DescribeQuorumRequest:
        _the_partition("DescribeQuorumRequest", body, "topics", "topic_name", "partition_index")
        return DescribeQuorumRequest()

    def _describe_response_in(self, body: Mapping[str, Any]) -> DescribeQuorumResponse:
        p, error = _response_partition("DescribeQuorumResponse", body, "topics", "topic_name",
                                       "partition_index")
        if p is None:
            return DescribeQuorumResponse(error, NO_LEADER, -1, -1)
        return DescribeQuorumResponse(
            error, p["leader_id"], p["leader_epoch"], p["high_watermark"],
            tuple(_replica_in(r) for r in p["current_voters"]),
            tuple(_replica_in(r) for r in p["observers"]),
        )


def _one_partition(topic_key: str, partition: Body) -> list[Body]:
    return [{topic_key: METADATA_TOPIC, "partitions": [partition]}]


def _snapshot_id(sid: OffsetAndEpoch) -> Body:
    return {"end_offset": sid.offset, "epoch": sid.epoch}


def _replica(r: ReplicaState) -> Body:
    return {
        "replica_id": r.replica_id,
        "log_end_offset": r.log_end_offset,
        "last_fetch_timestamp": r.last_fetch_ms,
        "last_caught_up_timestamp": r.last_caught_up_ms,
    }


def _replica_in(r: Mapping[str, Any]) -> ReplicaState:
    return ReplicaState(
        r["replica_id"], r["log_end_offset"],
        r.get("last_fetch_timestamp", -1), r.get("last_caught_up_timestamp", -1),
    )


def _the_partition(
    name: str, body: Mapping[str, Any], topics_key: str, topic_key: str, index_key: str
) -> Mapping[str, Any]:
    """The one ``__cluster_metadata`` 0 partition of a request, or a DecodeError."""
    topics = body[topics_key]
    if len(topics) != 1 or topics[0][topic_key] != METADATA_TOPIC:
        found = [t[topic_key] for t in topics]
        raise DecodeError(f"{name}: {topics_key}: expected the one topic {METADATA_TOPIC!r}, "
                          f"got {found}")
    partitions = topics[0]["partitions"]
    if len(partitions) != 1 or partitions[0][index_key] != METADATA_PARTITION:
        found = [p[index_key] for p in partitions]
        raise DecodeError(f"{name}: {topics_key}[0].partitions: expected the one partition "
                          f"{METADATA_PARTITION}, got {found}")
    return partitions[0]  # type: ignore[no-any-return]


def _response_partition(
    name: str, body: Mapping[str, Any], topics_key: str, topic_key: str, index_key: str
) -> tuple[Mapping[str, Any] | None, ErrorCode]:
    """(the partition, or None when a top-level error left none; the response's error)."""
    top = error_code(body["error_code"])
    if top != ErrorCode.NONE and not body[topics_key]:
        return None, top
    p = _the_partition(name, body, topics_key, topic_key, index_key)
    return p, top if top != ErrorCode.NONE else error_code(p["error_code"])


_TO_WIRE: dict[type, Callable[[RaftConverter, Any], Body]] = {
    VoteRequest: RaftConverter._vote_request,
    VoteResponse: RaftConverter._vote_response,
    BeginQuorumEpochRequest: RaftConverter._begin_request,
    BeginQuorumEpochResponse: RaftConverter._epoch_response,
    EndQuorumEpochRequest: RaftConverter._end_request,
    EndQuorumEpochResponse: RaftConverter._epoch_response,
    FetchRequest: RaftConverter._fetch_request,
    FetchResponse: RaftConverter._fetch_response,
    FetchSnapshotRequest: RaftConverter._fetch_snapshot_request,
    FetchSnapshotResponse: RaftConverter._fetch_snapshot_response,
    DescribeQuorumRequest: RaftConverter._describe_request,
    DescribeQuorumResponse: RaftConverter._describe_response,
}
_REQUEST_FROM_WIRE: dict[int, Callable[[RaftConverter, Mapping[str, Any]], object]] = {
    RaftApiKey.VOTE: RaftConverter._vote_request_in,
    RaftApiKey.BEGIN_QUORUM_EPOCH: RaftConverter._begin_request_in,
    RaftApiKey.END_QUORUM_EPOCH: RaftConverter._end_request_in,
    RaftApiKey.FETCH: RaftConverter._fetch_request_in,
    RaftApiKey.FETCH_SNAPSHOT: RaftConverter._fetch_snapshot_request_in,
    RaftApiKey.DESCRIBE_QUORUM: RaftConverter._describe_request_in,
}
_RESPONSE_FROM_WIRE: dict[int, Callable[[RaftConverter, Mapping[str, Any]], object]] = {
    RaftApiKey.VOTE: RaftConverter._vote_response_in,
    RaftApiKey.BEGIN_QUORUM_EPOCH: RaftConverter._begin_response_in,
    RaftApiKey.END_QUORUM_EPOCH: RaftConverter._end_response_in,
    RaftApiKey.FETCH: RaftConverter._fetch_response_in,
    RaftApiKey.FETCH_SNAPSHOT: RaftConverter._fetch_snapshot_response_in,
    RaftApiKey.DESCRIBE_QUORUM: RaftConverter._describe_response_in,
}
