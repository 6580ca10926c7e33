"""The quorum on the wire.

1. The codec: encode + decode of a Fetch response carrying a 100-record batch and of a Vote
   request, with kio 0.5's generated serializers and with our schema codec
   (``adapters.network.codec.raft_frames``). Bodies only (no header): the same work on both
   sides.
2. The transport (``adapters.raft_transport``) on loopback: Vote round trips one at a time
   (latency: send, the peer's ``on_message`` answers, the answer's ``on_message``), and 2,000
   Fetch requests answered with the same 100-record batch, pipelined (throughput).

Run: ``.venv/bin/python benchmarks/bench_raft_wire.py``."""

from __future__ import annotations

import io
import os
import socket
import threading
import time
import timeit
from collections.abc import Callable

from kio import serial as kio_serial
from kio.schema.errors import ErrorCode as KioError
from kio.schema.fetch.v12 import response as kfetch
from kio.schema.types import BrokerId, TopicName
from kio.schema.vote.v0 import request as kvote
from kio.static.primitive import Records, i32, i32Timedelta, i64

from adapters.network.codec import raft_frames
from adapters.network.codec.raft_convert import RaftConverter, RecordsCodec
from adapters.network.codec.raft_registry import RAFT_MESSAGES
from adapters.network.codec.wire import decode, encode
from adapters.raft_transport import RaftTransport
from fsm.errors import ErrorCode
from fsm.raft.messages import Batch, FetchRequest, FetchResponse, VoteRequest, VoteResponse

RECORD_BYTES = 100  # a small metadata record
RECORDS = os.urandom(61 + 100 * RECORD_BYTES)  # batch header + 100 records


def ours() -> dict[str, Callable[[], object]]:
    fetch_schema = RAFT_MESSAGES[1][1].schema(12)
    vote_schema = RAFT_MESSAGES[52][0].schema(0)
    fetch_body = {
        "error_code": 0,
        "responses": [{"topic": "__cluster_metadata", "partitions": [{
            "partition_index": 0, "error_code": 0, "high_watermark": 1000,
            "log_start_offset": 0, "records": RECORDS,
            "tagged_fields": {1: b"\x00\x00\x00\x01\x00\x00\x00\x05\x00"},
        }]}],
    }
    vote_body = {"cluster_id": "abcdefghijklmnopqrstuv", "topics": [{
        "topic_name": "__cluster_metadata", "partitions": [{
            "partition_index": 0, "candidate_epoch": 5, "candidate_id": 1,
            "last_offset_epoch": 4, "last_offset": 1000}]}]}
    assert raft_frames  # the module the transport uses; its body codec is the one timed
    return {
        "fetch": lambda: decode(fetch_schema, encode(fetch_schema, fetch_body)),
        "vote": lambda: decode(vote_schema, encode(vote_schema, vote_body)),
    }


def kio() -> dict[str, Callable[[], object]]:
    fetch_value = kfetch.FetchResponse(
        throttle_time=i32Timedelta.parse(__import__("datetime").timedelta(0)),
        error_code=KioError.none,
        responses=(kfetch.FetchableTopicResponse(
            topic=TopicName("__cluster_metadata"),
            partitions=(kfetch.PartitionData(
                partition_index=i32(0), error_code=KioError.none, high_watermark=i64(1000),
                log_start_offset=i64(0), aborted_transactions=None,
                current_leader=kfetch.LeaderIdAndEpoch(leader_id=BrokerId(1),
                                                       leader_epoch=i32(5)),
                records=Records(RECORDS)),)),),
    )
    vote_value = kvote.VoteRequest(
        cluster_id="abcdefghijklmnopqrstuv",
        topics=(kvote.TopicData(topic_name=TopicName("__cluster_metadata"), partitions=(
            kvote.PartitionData(partition_index=i32(0), candidate_epoch=i32(5),
                                candidate_id=BrokerId(1), last_offset_epoch=i32(4),
                                last_offset=i64(1000)),)),),
    )

    def roundtrip(value: object) -> Callable[[], object]:
        write = kio_serial.entity_writer(type(value))
        read = kio_serial.entity_reader(type(value))

        def run() -> object:
            buf = io.BytesIO()
            write(buf, value)
            data = buf.getvalue()
            return read(memoryview(data), 0)

        return run

    return {"fetch": roundtrip(fetch_value), "vote": roundtrip(vote_value)}


def transport(rounds: int = 500, fetches: int = 2000) -> None:
    converter = RaftConverter(RecordsCodec(lambda bs: bs[0].records[0],
                                           lambda d: (Batch(0, 0, (d,)),)), "bench")
    socks = [socket.create_server(("127.0.0.1", 0)) for _ in range(2)]
    voters = {i + 1: s.getsockname()[:2] for i, s in enumerate(socks)}
    answered = threading.Semaphore(0)
    batch = (Batch(0, 1, (RECORDS,)),)
    holder: dict[int, RaftTransport] = {}

    def server(source: int, m: object) -> None:
        if isinstance(m, VoteRequest):
            holder[2].send(source, VoteResponse(ErrorCode.NONE, m.candidate_epoch, -1, True))
        elif isinstance(m, FetchRequest):
            holder[2].send(source, FetchResponse(ErrorCode.NONE, 1, 2, m.fetch_offset, 0,
                                                 batch))

    def client(source: int, m: object) -> None:
        answered.release()

    with RaftTransport(2, voters, socks[1], server, converter=converter,
                       answer_limit=fetches) as t2, \
            RaftTransport(1, voters, socks[0], client, converter=converter,
                          queue_limit=fetches) as t1:
        holder[2] = t2
        t1.send(2, VoteRequest(1, 1, 0, 0))  # connect first
        answered.acquire()
        latencies = []
        for i in range(rounds):
            start = time.perf_counter()
            t1.send(2, VoteRequest(i + 2, 1, 0, 0))
            answered.acquire()
            latencies.append(time.perf_counter() - start)
        latencies.sort()
        print(f"vote round trip: median {latencies[len(latencies) // 2] * 1e6:.0f} us, "
              f"p99 {latencies[int(len(latencies) * 0.99)] * 1e6:.0f} us ({rounds} rounds)")
        start = time.perf_counter()
        for i in range(fetches):
            t1.send(2, FetchRequest(1, 1, i, 1))
        for _ in range(fetches):
            answered.acquire()
        elapsed = time.perf_counter() - start
        size = len(RECORDS) * fetches / 1e6
        print(f"fetch pipelined: {fetches} answers of {len(RECORDS)} B records in "
              f"{elapsed * 1e3:.0f} ms: {fetches / elapsed:.0f} answers/s, "
              f"{size / elapsed:.1f} MB/s of records")


def full_path(n: int = 500) -> None:
    """fsm FetchResponse of one 100-record batch -> frame -> fsm, records through raft_log's
    record batch v2 codec (bytes records of 100 bytes, CRC-32C both ways)."""
    from adapters.raft_log.serde import BYTES
    from adapters.raft_log.wire_records import decode_batches, encode_batches

    converter = RaftConverter(RecordsCodec(lambda bs: encode_batches(bs, BYTES, 0),
                                           lambda d: decode_batches(d, BYTES)), "bench")
    records = tuple(os.urandom(RECORD_BYTES) for _ in range(100))
    message = FetchResponse(ErrorCode.NONE, 5, 1, 1000, 0, (Batch(900, 5, records),))

    def run() -> object:
        key, _, body = converter.to_wire(message)
        frame = raft_frames.encode_response(key, 12, 1, body)
        _, decoded = raft_frames.decode_response(key, 12, frame[4:])
        return converter.from_wire(key, False, decoded)

    assert run() == message
    best = min(timeit.repeat(run, number=n, repeat=5)) / n
    print(f"full path, Fetch answer of 100 records via raft_log's batch v2: "
          f"{best * 1e6:.0f} us per encode+decode")


def main() -> None:
    full_path()
    transport()
    sides = {"kio 0.5": kio(), "ours": ours()}
    for case in ("fetch", "vote"):
        for side, fns in sides.items():
            n = 2000
            best = min(timeit.repeat(fns[case], number=n, repeat=5)) / n
            print(f"{case:6} {side:8} {best * 1e6:8.1f} us per encode+decode")


if __name__ == "__main__":
    main()
