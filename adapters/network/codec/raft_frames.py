"""Request and response frames of the quorum APIs (``raft_registry``), pure: a
``table_frames.FrameTable`` over the quorum's own table, so the quorum listener refuses every
other API. BeginQuorumEpoch and EndQuorumEpoch v0 are not flexible (request header v1,
response header v0); the others are.
"""

from __future__ import annotations

from adapters.network.codec.raft_registry import RAFT_MESSAGES, RAFT_SUPPORTED, api_name
from adapters.network.codec.table_frames import (
    FrameTable,
    TableRequest,
    decode_body,
    failing_field,
    peek_correlation_id,
)

RaftRequest = TableRequest

TABLE = FrameTable(RAFT_MESSAGES, RAFT_SUPPORTED, api_name,
                   "is not served by the quorum listener")
is_raft_api = TABLE.serves
encode_request = TABLE.encode_request
encode_body = TABLE.encode_body
encode_response = TABLE.encode_response
parse_request = TABLE.parse_request
decode_response = TABLE.decode_response

__all__ = ["TABLE", "RaftRequest", "decode_body", "decode_response", "encode_body",
           "encode_request", "encode_response", "failing_field", "is_raft_api",
           "parse_request", "peek_correlation_id"]
