"""Failover of the metadata quorum (issue 24): the leader of 3 voter processes is killed with
``kill -9``; timed from the kill to the moment a new leader has committed a record (the
record's append answered committed by the new leader). Target: under the election timeout
+ 200 ms.

Failure detection in KIP-595 is the followers' fetch timeout (a follower that hears nothing
for ``controller.quorum.fetch.timeout.ms`` stands for election), so the run sets the fetch
timeout to the election timeout (Kafka's defaults are 2 s and 1 s); both are printed.

Each run: a leader all nodes agree on, one record committed, the kill, then every surviving
voter is asked in turn (admin socket, a few ms apart) to append one record until one answers
it committed; the killed voter is started again and caught up before the next run.

    .venv/bin/python benchmarks/bench_raft_failover.py [--runs 7] [--election-timeout-ms 1000]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import tempfile
import time
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).absolute().parents[1]))

from adapters.raft_node.admin import AdminError  # noqa: E402
from adapters.raft_node.launcher import LocalQuorum, Voter  # noqa: E402

MARGIN_MS = 200
POLL_S = 0.002


def calibration() -> float:
    return min(timeit.repeat("sum(i*i for i in range(10**6))", number=1, repeat=5))


def commit_on_new_leader(voters: list[Voter], deadline: float) -> tuple[Voter, dict]:
    """Ask each survivor to append one record until one answers it committed."""
    while time.monotonic() < deadline:
        for v in voters:
            try:
                return v, v.request("append", records=1, batch=1, size=100, timeout=30)
            except (AdminError, OSError, ConnectionError):
                continue
        time.sleep(POLL_S)
    raise TimeoutError("no new leader committed a record")


def one_run(q: LocalQuorum) -> tuple[float, int, int]:
    """(seconds from the kill to the new leader's commit, old epoch, new epoch)."""
    leader = q.wait_leader(60)
    before = leader.request("append", records=1, batch=1, size=100)
    q.wait_high_watermark(before["end_offset"], 60)
    survivors = [v for v in q.voters.values() if v is not leader]
    t0 = time.monotonic()
    leader.kill()
    new, answer = commit_on_new_leader(survivors, t0 + 60)
    elapsed = time.monotonic() - t0
    leader.start()
    q.wait_high_watermark(answer["end_offset"], 60)
    return elapsed, before["epoch"], answer["epoch"]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=7)
    p.add_argument("--election-timeout-ms", type=int, default=1000)
    p.add_argument("--fetch-timeout-ms", type=int, default=0,
                   help="0: the election timeout")
    p.add_argument("--backoff-max-ms", type=int, default=0,
                   help="election backoff max; 0: the election timeout")
    a = p.parse_args()
    election = a.election_timeout_ms
    fetch = a.fetch_timeout_ms or election
    backoff = a.backoff_max_ms or election
    target_ms = election + MARGIN_MS
    print(f"python {platform.python_version()} on {platform.machine()}, "
          f"{platform.node()}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(f"calibration sum(i*i) best of 5: {calibration():.3f} s")
    print(f"election timeout {election} ms, fetch timeout {fetch} ms, backoff max {backoff} ms;"
          f" target < {target_ms} ms")
    times: list[float] = []
    with tempfile.TemporaryDirectory(prefix="bench-raft-failover-") as root:
        q = LocalQuorum(Path(root), election_timeout_ms=election, fetch_timeout_ms=fetch,
                        election_backoff_max_ms=backoff)
        q.start()
        try:
            for i in range(a.runs):
                s, old, new = one_run(q)
                times.append(s * 1000)
                print(f"run {i + 1}: {s * 1000:7.1f} ms  (epoch {old} -> {new})", flush=True)
        finally:
            q.stop()
    print(f"calibration sum(i*i) best of 5: {calibration():.3f} s")
    med = statistics.median(times)
    verdict = "ok" if max(times) < target_ms else (
        "median ok, max over" if med < target_ms else "over")
    print(f"failover ms: min {min(times):.1f}  median {med:.1f}  max {max(times):.1f}  "
          f"target < {target_ms}  {verdict}")


if __name__ == "__main__":
    main()
