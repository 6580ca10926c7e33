"""The KRaft fault campaign's faulty network and faulty disk (``adapters.kraft_chaos``).

1. ``ProxyMesh`` on loopback, against a frame-echo server reached directly: round trips of
   a 100-byte frame one at a time (latency the proxy adds), and 64 KiB frames pipelined
   (throughput through its one I/O thread).
2. With ``--cluster``: a ``ProxiedKRaftCluster`` of 3 controllers and 1 broker -- the time
   from cutting the active controller off to the other two agreeing on a successor, from
   the heal to all three agreeing again; and, where a tmpfs can be mounted, from filling
   controller 3001's disk (the quorum writing meanwhile) to its exit, and from its restart
   to its catching up.

Run: ``.venv/bin/python benchmarks/bench_kraft_chaos_proxy.py [--cluster]``."""

from __future__ import annotations

import argparse
import socket
import statistics
import struct
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from adapters.kraft_chaos.disk import mount_problem
from adapters.kraft_chaos.proxied_cluster import ProxiedKRaftCluster
from adapters.kraft_chaos.proxy import ProxyMesh

ROUND_TRIPS = 2000
BULK_FRAMES = 2000
BULK_BYTES = 64 * 1024
WAIT_S = 60.0


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    out = bytearray()
    while len(out) < n:
        got = sock.recv(min(n - len(out), 1 << 20))
        if not got:
            raise ConnectionError("closed")
        out += got
    return bytes(out)


def _echo_server() -> tuple[socket.socket, int]:
    """Echoes each frame back, one thread per connection (daemon threads)."""
    listener = socket.create_server(("127.0.0.1", 0))

    def serve(conn: socket.socket) -> None:
        with conn:
            try:
                while True:
                    head = _recv_exact(conn, 4)
                    conn.sendall(head + _recv_exact(conn, struct.unpack(">i", head)[0]))
            except (ConnectionError, OSError):
                return

    def accept() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    return listener, int(listener.getsockname()[1])


def _dial(port: int) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def _latency_us(port: int) -> tuple[float, float]:
    frame = struct.pack(">i", 100) + bytes(100)
    times = []
    with _dial(port) as s:
        for _ in range(ROUND_TRIPS):
            t = time.perf_counter()
            s.sendall(frame)
            _recv_exact(s, len(frame))
            times.append((time.perf_counter() - t) * 1e6)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.99)]


def _throughput_mb_s(port: int) -> float:
    frame = struct.pack(">i", BULK_BYTES) + bytes(BULK_BYTES)
    with _dial(port) as s:
        t = time.perf_counter()
        writer = threading.Thread(target=lambda: [s.sendall(frame) for _ in range(BULK_FRAMES)])
        writer.start()
        _recv_exact(s, len(frame) * BULK_FRAMES)
        writer.join()
        return len(frame) * BULK_FRAMES / (time.perf_counter() - t) / 1e6


def bench_proxy() -> None:
    listener, echo_port = _echo_server()
    try:
        with ProxyMesh() as mesh:
            via = mesh.add_link("a", "b", ("127.0.0.1", echo_port))
            for name, port in (("direct", echo_port), ("proxied", via)):
                med, p99 = _latency_us(port)
                print(f"{name:8} round trip of a 100-byte frame: median {med:7.1f} us, "
                      f"p99 {p99:7.1f} us")
            for name, port in (("direct", echo_port), ("proxied", via)):
                print(f"{name:8} 64 KiB frames pipelined, both ways: "
                      f"{_throughput_mb_s(port):7.1f} MB/s")
            s = mesh.stats()[("a", "b")]
            print(f"proxy counted {s['frames_forwarded']} frames, {s['bytes']} bytes")
    finally:
        listener.close()


def _poll(what: str, probe: Callable[[], object], timeout: float = WAIT_S) -> float:
    """Seconds until ``probe()`` is truthy."""
    t = time.monotonic()
    while not probe():
        if time.monotonic() - t > timeout:
            raise TimeoutError(f"{what}: not within {timeout:g} s")
        time.sleep(0.02)
    return time.monotonic() - t


def bench_cluster() -> None:
    problem = mount_problem()
    with tempfile.TemporaryDirectory(prefix="bench-kraft-chaos-") as tmp:
        c = ProxiedKRaftCluster(Path(tmp) / "k", 3, 1,
                                small_disks=[3001] if problem is None else [], disk_mib=16)
        try:
            t = time.monotonic()
            first = c.up(timeout=WAIT_S)
            print(f"cluster up (3 controllers, 1 broker, through the mesh): "
                  f"{time.monotonic() - t:.1f} s")
            old = c.controllers[first.leader]
            others = [i for i in c.controllers if i != first.leader]

            def successor() -> bool:
                st = c.statuses()
                views = {(st[i]["leader_id"], st[i]["epoch"]) for i in others if i in st}
                return (len(views) == 1 and all(i in st for i in others)
                        and next(iter(views))[0] in others
                        and next(iter(views))[1] > first.epoch)

            c.mesh.isolate(old.name)
            print(f"active controller cut off -> the others agree on a successor: "
                  f"{_poll('successor', successor):.2f} s")
            c.mesh.heal()
            healed = _poll("agreed", lambda: c.quorum() is not None)
            print(f"healed -> all three agree on one leader: {healed:.2f} s")
            if problem is not None:
                print(f"disk faults unavailable: {problem}")
                return
            x = c.controllers[3001]
            c.disks[3001].fill()
            n = [0]

            def exited() -> bool:
                if x.proc is not None and x.proc.poll() is not None:
                    return True
                v = c.quorum()
                if v is not None:
                    n[0] += 1
                    c.controllers[v.leader].ask("register_broker", broker_id=1000 + n[0])
                return False

            took = _poll("3001 exits", exited)
            x.stopped = True
            print(f"3001's disk full -> 3001 exits (status {x.proc.returncode if x.proc else '?'}"
                  f", {n[0]} brokers registered meanwhile): {took:.2f} s")
            c.disks[3001].restore()
            t = time.monotonic()
            c.restart(3001)
            hw = c.wait_leader(WAIT_S).high_watermark
            _poll("caught up", lambda: (c.controllers[3001].ask("status") or {}).get(
                "high_watermark", -1) >= hw)
            print(f"disk restored, 3001 restarted -> caught up (high watermark {hw}): "
                  f"{time.monotonic() - t:.2f} s")
        finally:
            c.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cluster", action="store_true", help="also the cluster figures")
    args = parser.parse_args()
    bench_proxy()
    if args.cluster:
        bench_cluster()


if __name__ == "__main__":
    main()
