"""The quorum APIs' codec: encode + decode of a Fetch response carrying a 100-record batch
and of a Vote request, with kio 0.5's generated serializers and with our schema codec
(``adapters.network.codec.raft_frames``). Bodies only (no header): the same work on both
sides. Run: ``.venv/bin/python benchmarks/bench_raft_wire.py``."""

from __future__ import annotations

import io
import os
import timeit
from collections.abc import Callable

from kio import serial as kio_serial
from kio.schema.errors import ErrorCode as KioError
from kio.schema.fetch.v12 import response as kfetch
from kio.schema.types import BrokerId, TopicName
from kio.schema.vote.v0 import request as kvote
from kio.static.primitive import Records, i32, i32Timedelta, i64

from adapters.network.codec import raft_frames
from adapters.network.codec.raft_registry import RAFT_MESSAGES
from adapters.network.codec.wire import decode, encode

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


def main() -> None:
    sides = {"kio 0.5": kio(), "ours": ours()}
    for case in ("fetch", "vote"):
        for side, fns in sides.items():
            n = 2000
            best = min(timeit.repeat(fns[case], number=n, repeat=5)) / n
            print(f"{case:6} {side:8} {best * 1e6:8.1f} us per encode+decode")


if __name__ == "__main__":
    main()
