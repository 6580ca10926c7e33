"""Encode and decode rates of the KRaft APIs' codec (issue 25): ours (``adapters/network/codec``,
the schemas of ``apis/`` and ``kraft_frames``) against kio 0.5's generated serializers
(``entity_writer`` / ``entity_reader``, from Kafka's JSON schemas), for the request a broker
sends most (BrokerHeartbeat v0, every ``broker.heartbeat.interval.ms``) and a large admin
request (CreateTopics v7 of 100 topics, 3 partitions each, 3 explicit replicas per partition
and 2 configs).

Bodies only (no header); the same content both ways, the bytes checked equal before timing.
"Ours + values" adds ``kraft_convert`` (the ``fsm`` value to the wire dict and back), which is
what the listener pays per request. Rates are per CPU second of one core
(``time.process_time``), best of ``--repeat`` runs of ``--n`` operations; a fixed calibration
(``sum(i*i for i in range(10**6))``, best of 5) is printed before and after, to compare the
absolute figures across machines and moments.

    .venv/bin/python benchmarks/bench_kraft_codec.py [--n 200] [--repeat 5]
"""

from __future__ import annotations

import argparse
import datetime
import io
import os
import platform
import sys
import time
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kio import serial as kio_serial  # noqa: E402
from kio.schema.broker_heartbeat.v0.request import (  # noqa: E402
    BrokerHeartbeatRequest as KioHeartbeat,
)
from kio.schema.create_topics.v7 import request as kio_ct  # noqa: E402
from kio.static.primitive import i16, i32, i64  # noqa: E402

from adapters.network.codec import kraft_convert  # noqa: E402
from adapters.network.codec.kraft_registry import KRAFT_MESSAGES, KRaftApiKey  # noqa: E402
from adapters.network.codec.wire import decode, encode  # noqa: E402
from fsm.kraft.controller.requests import (  # noqa: E402
    BrokerHeartbeatRequest,
    CreatableTopic,
    CreateTopicsRequest,
)

TOPICS = 100


def calibration() -> float:
    """Seconds for ``sum(i*i for i in range(10**6))``, best of 5."""
    return min(timeit.repeat("sum(i*i for i in range(10**6))", number=1, repeat=5))


def heartbeat() -> tuple[Any, Any, int, int]:
    value = BrokerHeartbeatRequest(broker_id=3, broker_epoch=1234567, current_metadata_offset=987654,
                                   want_fence=False, want_shut_down=False)
    theirs = KioHeartbeat(broker_id=i32(3), broker_epoch=i64(1234567),
                          current_metadata_offset=i64(987654), want_fence=False,
                          want_shut_down=False)
    return value, theirs, KRaftApiKey.BROKER_HEARTBEAT, 0


def create_topics() -> tuple[Any, Any, int, int]:
    configs = (("cleanup.policy", "compact"), ("retention.ms", "86400000"))
    topics = tuple(
        CreatableTopic(f"topic-{t:04d}", -1, -1,
                       tuple((p, ((t + p) % 10, (t + p + 1) % 10, (t + p + 2) % 10))
                             for p in range(3)), configs)
        for t in range(TOPICS))
    value = CreateTopicsRequest(topics, (), validate_only=False)
    theirs = kio_ct.CreateTopicsRequest(
        topics=tuple(
            kio_ct.CreatableTopic(
                name=t.name, num_partitions=i32(-1), replication_factor=i16(-1),
                assignments=tuple(kio_ct.CreatableReplicaAssignment(
                    partition_index=i32(p), broker_ids=tuple(i32(b) for b in r))
                    for p, r in t.assignments),
                configs=tuple(kio_ct.CreatableTopicConfig(name=k, value=v) for k, v in t.configs))
            for t in topics),
        timeout=datetime.timedelta(milliseconds=60000), validate_only=False)
    return value, theirs, KRaftApiKey.CREATE_TOPICS, 7


def rate(fn: Callable[[], object], n: int, repeat: int) -> float:
    """Calls of ``fn`` per CPU second, best of ``repeat`` runs of ``n``."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        for _ in range(n):
            fn()
        best = min(best, time.process_time() - start)
    return n / best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=200,
                    help="CreateTopics operations per run (BrokerHeartbeat: 100 times as many)")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    cal0 = calibration()
    print(f"# {platform.python_implementation()} {platform.python_version()}, "
          f"{os.cpu_count()} CPUs, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(f"# calibration sum(i*i for i in range(10**6)): {cal0:.3f} s; "
          f"load average {os.getloadavg()[0]:.2f}")
    print(f"# bodies only, best of {args.repeat}, operations per CPU second")
    print(f"{'request':<26} {'bytes':>6} {'codec':<14} {'encode/s':>11} {'decode/s':>11} "
          f"{'enc us':>8} {'dec us':>8}")
    for name, build in (("BrokerHeartbeat v0", heartbeat),
                        (f"CreateTopics v7 x{TOPICS}", create_topics)):
        value, theirs, key, version = build()
        n = args.n * (100 if key == KRaftApiKey.BROKER_HEARTBEAT else 1)
        schema = KRAFT_MESSAGES[key][0].schema(version)
        body = kraft_convert.request_to_wire(key, version, value)
        ours = encode(schema, body)
        writer = kio_serial.entity_writer(type(theirs))
        reader = kio_serial.entity_reader(type(theirs))

        def kio_encode(writer: Any = writer, theirs: Any = theirs) -> bytes:
            buf = io.BytesIO()
            writer(buf, theirs)
            return buf.getvalue()

        assert kio_encode() == ours, "kio and ours disagree on the bytes"
        assert reader(memoryview(ours), 0)[0] == theirs
        assert kraft_convert.request_from_wire(key, version, decode(schema, ours)) == value
        rows = (
            ("kio 0.5", kio_encode, lambda r=reader, b=ours: r(memoryview(b), 0)),
            ("ours", lambda s=schema, b=body: encode(s, b), lambda s=schema, b=ours: decode(s, b)),
            ("ours + values",
             lambda s=schema, k=key, v=version, x=value: encode(
                 s, kraft_convert.request_to_wire(k, v, x)),
             lambda s=schema, k=key, v=version, b=ours: kraft_convert.request_from_wire(
                 k, v, decode(s, b))),
        )
        results = []
        for codec, enc_fn, dec_fn in rows:
            enc = rate(enc_fn, n, args.repeat)
            dec = rate(dec_fn, n, args.repeat)
            results.append((codec, enc, dec))
            print(f"{name:<26} {len(ours):>6} {codec:<14} {enc:>11,.0f} {dec:>11,.0f} "
                  f"{1e6 / enc:>8.2f} {1e6 / dec:>8.2f}")
        (_, kio_enc, kio_dec), (_, our_enc, our_dec) = results[0], results[1]
        print(f"{name:<26} {'':>6} {'ours / kio':<14} {our_enc / kio_enc:>10.2f}x "
              f"{our_dec / kio_dec:>10.2f}x")
    cal1 = calibration()
    print(f"# calibration after: {cal1:.3f} s; load average {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
