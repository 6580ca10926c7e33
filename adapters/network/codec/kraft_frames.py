"""Request and response frames of the KRaft APIs (``kraft_registry``), pure: the functions and
signatures of ``raft_frames`` over the other table.

A ``table_frames.FrameTable`` of its own rather than one lookup over both tables, so a quorum
listener still refuses BrokerHeartbeat and a controller listener can tell which table a key
belongs to. A flexible version has request header v2 and response header v1;
the others (CreateTopics v2-v4, DeleteTopics v1-v3, CreatePartitions v0-v1, ElectLeaders
v0-v1) request header v1 and response header v0. Malformed, truncated or oversized input
raises :class:`DecodeError` (a ``CodecError``) naming the API and the field, nothing else.
"""

from __future__ import annotations

from adapters.network.codec.framing import DEFAULT_MAX_FRAME_SIZE
from adapters.network.codec.kraft_registry import KRAFT_MESSAGES, KRAFT_SUPPORTED, api_name
from adapters.network.codec.table_frames import FrameTable, TableRequest, peek_correlation_id

KRaftRequest = TableRequest

TABLE = FrameTable(KRAFT_MESSAGES, KRAFT_SUPPORTED, api_name, "is not a KRaft API version",
                   max_frame=DEFAULT_MAX_FRAME_SIZE)
is_kraft_api = TABLE.serves
encode_request = TABLE.encode_request
encode_body = TABLE.encode_body
encode_response = TABLE.encode_response
parse_request = TABLE.parse_request
decode_response = TABLE.decode_response

__all__ = ["TABLE", "KRaftRequest", "decode_response", "encode_body", "encode_request",
           "encode_response", "is_kraft_api", "parse_request", "peek_correlation_id"]
