"""Fuzz the quorum codec the way the quorum transport uses it (``adapters.raft_transport.fuzz``).

Input ``i`` is a function of ``--seed`` and ``i`` alone (replay one with ``--replay I``): a
valid request or response frame of every quorum API and version, mutated structure-aware
(lengths, counts, varints, header, size prefix, bit flips, truncation, splices), or random
bytes. Requests go through ``fuzz_request`` (what an inbound connection does), responses
through ``fuzz_response`` at their API and version (what an outbound one does). The contract:
decoded, incomplete, or one of the codec's own errors; anything else is a crash (exit 1).

    .venv/bin/python benchmarks/bench_fuzz_raft_wire.py --inputs 200000 [--seed S]
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import sys
import time
import traceback

from adapters.network.codec.errors import CodecError
from adapters.raft_transport import fuzz as F


def run_one(requests: list, responses: list, seed: int, i: int) -> str:  # type: ignore[type-arg]
    rng = random.Random(seed * 1_000_003 + i)
    response = rng.random() < 0.5
    pool = responses if response else requests
    s = pool[rng.randrange(len(pool))]
    data = F.mutate(s, rng, pool[rng.randrange(len(pool))])
    try:
        if response:
            return F.fuzz_response(data, s.api_key, s.api_version)
        return F.fuzz_request(data)
    except CodecError as e:
        return type(e).__name__


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--inputs", type=int, default=100_000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--replay", type=int, default=None)
    args = p.parse_args()
    requests = F.corpus(args.seed, per_version=8)
    responses = F.corpus(args.seed + 1, per_version=8, response=True)
    if args.replay is not None:
        print(run_one(requests, responses, args.seed, args.replay))
        return 0
    counts: collections.Counter[str] = collections.Counter()
    crashes = 0
    start = time.perf_counter()
    for i in range(args.inputs):
        try:
            counts[run_one(requests, responses, args.seed, i)] += 1
        except Exception:
            crashes += 1
            print(f"CRASH at input {i} (--replay {i} --seed {args.seed}):", file=sys.stderr)
            traceback.print_exc()
    elapsed = time.perf_counter() - start
    print(f"inputs {args.inputs}, seed {args.seed}, {elapsed:.1f} s, "
          f"{args.inputs / elapsed:.0f} inputs/s, load {os.getloadavg()[0]:.1f}")
    for label, n in counts.most_common():
        print(f"  {label:14} {n:8}")
    print(f"  {'crashes':14} {crashes:8}")
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())
