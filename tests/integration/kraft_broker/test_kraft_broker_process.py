"""``python -m adapters.kraft_broker`` as a process with no controller to reach: it serves
ApiVersions at once (what a KRaft broker serves), shows no broker in Metadata until it is
registered, and exits by itself with status 3 once ``initial.broker.registration.timeout.ms``
has passed (the core's Exit stops the process); SIGTERM before that exits 0 at once (nothing
to hand over in STARTING); a bad argument exits 2 naming it."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from adapters.ensemble.processes import free_ports
from adapters.network.codec import dispatch
from adapters.network.codec.apis.metadata import all_topics_request
from adapters.network.codec.framing import FrameReader
from adapters.network.codec.headers import RequestHeader

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[3]


def _broker(tmp_path: Path, port: int, *extra: str) -> subprocess.Popen[bytes]:
    dead = free_ports(1)[0]  # nobody listens there: no controller is ever reached
    return subprocess.Popen(
        [sys.executable, "-m", "adapters.kraft_broker", "--node-id", "5", "--voters",
         f"1@127.0.0.1:{dead}", "--listener", f"127.0.0.1:{port}", "--dir",
         str(tmp_path / "b5"), "--cluster-id", "c", *extra],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _call(port: int, frame: bytes, key: int, version: int) -> dict:  # type: ignore[type-arg]
    deadline = time.monotonic() + 10
    while True:
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
            break
        except OSError:
            assert time.monotonic() < deadline, "the broker's listener never opened"
            time.sleep(0.05)
    with sock:
        sock.sendall(frame)
        reader = FrameReader()
        while not (frames := reader.feed(sock.recv(65536))):
            pass
        return dispatch.decode_response(key, version, frames[0])[1]


def test_an_unregistered_broker_serves_then_exits_after_the_registration_timeout(
        tmp_path: Path) -> None:
    port = free_ports(1)[0]
    proc = _broker(tmp_path, port, "--registration-timeout-ms", "1500")
    try:
        versions = _call(port, dispatch.encode_request(RequestHeader(18, 3, 1, "t"), {
            "client_software_name": "t", "client_software_version": "1"}), 18, 3)
        assert {e["api_key"] for e in versions["api_keys"]} == {3, 18, 19, 20, 37, 43, 45, 46,
                                                                 60, 64}
        meta = _call(port, dispatch.encode_request(RequestHeader(3, 8, 2, "t"),
                                                   all_topics_request(8)), 3, 8)
        assert meta["brokers"] == [] and meta["controller_id"] == -1
        t0 = time.monotonic()
        assert proc.wait(15) == 3
        assert time.monotonic() - t0 < 10
        err = proc.stderr.read().decode()  # type: ignore[union-attr]
        assert "lifecycle STARTING -> SHUTTING_DOWN" in err
        # the process's last step: the core hears it end (BrokerShell.end)
        assert err.index("lifecycle SHUTTING_DOWN -> NOT_RUNNING") > \
            err.index("lifecycle STARTING -> SHUTTING_DOWN")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def test_sigterm_while_starting_exits_0_and_a_bad_argument_2(tmp_path: Path) -> None:
    port = free_ports(1)[0]
    proc = _broker(tmp_path, port)
    try:
        _call(port, dispatch.encode_request(RequestHeader(18, 0, 1, "t"), {}), 18, 0)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    bad = subprocess.run([sys.executable, "-m", "adapters.kraft_broker", "--node-id", "1",
                          "--voters", "1@127.0.0.1:1", "--listener", "127.0.0.1:0", "--dir",
                          str(tmp_path), "--cluster-id", "c"], cwd=ROOT, capture_output=True,
                         text=True, timeout=30)
    assert bad.returncode == 2 and "--node-id 1 is one of --voters" in bad.stderr
