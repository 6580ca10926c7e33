"""Hypothesis strategies for every ``fsm.raft.messages`` value (a helper, not a test)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from fsm.errors import ErrorCode
from fsm.raft.messages import (
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
    LeaderChange,
    OffsetAndEpoch,
    ReplicaState,
    VoteRequest,
    VoteResponse,
)

I32 = st.integers(-(2**31), 2**31 - 1)
I64 = st.integers(-(2**63), 2**63 - 1)
NODE = st.integers(-1, 2**31 - 1)
EPOCH = st.integers(0, 2**31 - 1)
OFFSET = st.integers(0, 2**63 - 1)
ERRORS = st.sampled_from(list(ErrorCode))
OFFSET_AND_EPOCH = st.builds(OffsetAndEpoch, OFFSET, EPOCH)
RECORD = st.binary(max_size=8) | st.text(max_size=8) | st.integers()
CONTROL = st.builds(LeaderChange, NODE, st.tuples(NODE, NODE), st.tuples(NODE))
BATCH = st.one_of(
    st.builds(Batch, OFFSET, EPOCH, st.tuples(RECORD) | st.tuples(RECORD, RECORD)),
    st.builds(Batch, OFFSET, EPOCH, st.tuples(CONTROL), st.just(True)),
)
REPLICA = st.builds(ReplicaState, NODE, I64, I64, I64)


def requests() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.builds(VoteRequest, EPOCH, NODE, EPOCH, OFFSET),
        st.builds(BeginQuorumEpochRequest, EPOCH, NODE),
        st.builds(EndQuorumEpochRequest, EPOCH, NODE, st.lists(NODE, max_size=4).map(tuple)),
        st.builds(FetchRequest, st.integers(0, 2**31 - 1), EPOCH, OFFSET, EPOCH),
        st.builds(FetchSnapshotRequest, st.integers(0, 2**31 - 1), EPOCH, OFFSET_AND_EPOCH,
                  OFFSET),
        st.just(DescribeQuorumRequest()),
    )


def responses() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.builds(VoteResponse, ERRORS, EPOCH, NODE, st.booleans()),
        st.builds(BeginQuorumEpochResponse, ERRORS, EPOCH, NODE),
        st.builds(EndQuorumEpochResponse, ERRORS, EPOCH, NODE),
        st.builds(FetchResponse, ERRORS, EPOCH, NODE, OFFSET, OFFSET,
                  st.lists(BATCH, max_size=3).map(tuple),
                  st.none() | OFFSET_AND_EPOCH, st.none() | OFFSET_AND_EPOCH),
        st.builds(FetchSnapshotResponse, ERRORS, EPOCH, NODE, OFFSET_AND_EPOCH, OFFSET, OFFSET,
                  st.binary(max_size=64)),
        st.builds(DescribeQuorumResponse, ERRORS, NODE, EPOCH, OFFSET,
                  st.lists(REPLICA, max_size=3).map(tuple),
                  st.lists(REPLICA, max_size=3).map(tuple)),
    )


def messages() -> st.SearchStrategy[Any]:
    return requests() | responses()
