"""A quorum node that only answers (a helper process of the TCP test, not a test): it serves a
transport on the socket it inherits (``--fd``) and answers every request with a fixed response
of its API naming itself; ``--fd`` is a bound socket, so the parent knows every port first.
It runs until its stdin closes."""

from __future__ import annotations

import argparse
import json
import socket
import sys

from adapters.network.codec.raft_convert import RaftConverter, RecordsCodec
from adapters.raft_transport import RaftTransport
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
    VoteRequest,
    VoteResponse,
)

BYTES = RecordsCodec(lambda batches: b"".join(r for b in batches for r in b.records),
                     lambda data: (Batch(0, 1, (data,)),))


def answer(node: int, m: object) -> object:
    match m:
        case VoteRequest():
            return VoteResponse(ErrorCode.NONE, m.candidate_epoch, -1, True)
        case BeginQuorumEpochRequest():
            return BeginQuorumEpochResponse(ErrorCode.NONE, m.leader_epoch, m.leader_id)
        case EndQuorumEpochRequest():
            return EndQuorumEpochResponse(ErrorCode.NONE, m.leader_epoch, node)
        case FetchRequest():
            return FetchResponse(ErrorCode.NONE, m.current_leader_epoch, node, m.fetch_offset,
                                 0, (Batch(0, 1, (b"from-%d" % node,)),))
        case FetchSnapshotRequest():
            return FetchSnapshotResponse(ErrorCode.NONE, m.current_leader_epoch, node,
                                         m.snapshot_id, 3, m.position, b"abc")
        case DescribeQuorumRequest():
            return DescribeQuorumResponse(ErrorCode.NONE, node, 1, 0)
    raise TypeError(m)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--node", type=int, required=True)
    p.add_argument("--fd", type=int, required=True)
    p.add_argument("--voters", required=True)  # JSON {id: [host, port]}
    args = p.parse_args()
    voters = {int(k): (h, port) for k, (h, port) in json.loads(args.voters).items()}
    holder: list[RaftTransport] = []

    def on_message(source: int, message: object) -> None:
        holder[0].send(source, answer(args.node, message))

    listener = socket.socket(fileno=args.fd)
    with RaftTransport(args.node, voters, listener, on_message,
                       converter=RaftConverter(BYTES, "it")) as t:
        holder.append(t)
        print("ready", flush=True)
        sys.stdin.read()  # until the parent closes it


if __name__ == "__main__":
    main()
