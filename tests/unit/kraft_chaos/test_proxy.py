"""``ProxyMesh`` with real loopback sockets: a frame-echo server behind one link, clients
dialing the link's port."""

from __future__ import annotations

import random
import socket
import struct
import threading
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapters.kraft_chaos.proxy import LinkMode, ProxyMesh
from tests.unit.kraft_chaos.frame_echo import (
    FrameEcho,
    dial,
    frame,
    recv_exact,
    recv_frame,
    wait_until,
)

A, B = "controller-3000", "controller-3001"


@pytest.fixture
def echo() -> Iterator[FrameEcho]:
    server = FrameEcho()
    yield server
    server.close()


@pytest.fixture
def mesh(echo: FrameEcho) -> Iterator[ProxyMesh]:
    with ProxyMesh(seed=7, max_frame_bytes=64 * 1024) as m:
        m.add_link(A, B, ("127.0.0.1", echo.port))
        yield m


def _link_stats(mesh: ProxyMesh) -> dict[str, int]:
    return mesh.stats()[(A, B)]


def test_pass_relays_frames_in_order(mesh: ProxyMesh, echo: FrameEcho) -> None:
    payloads = [bytes([i % 256]) * (i * 97 % 5000) for i in range(60)]
    with dial(mesh.port(A, B)) as c:
        c.sendall(b"".join(frame(p) for p in payloads))
        assert [recv_frame(c) for _ in payloads] == payloads
    assert echo.received == payloads
    s = _link_stats(mesh)
    assert s["requests_forwarded"] == s["responses_forwarded"] == 60
    assert s["frames_dropped"] == 0 and s["connections"] == 1


def test_drop_requests_drops_that_direction_only(mesh: ProxyMesh, echo: FrameEcho) -> None:
    with dial(mesh.port(A, B)) as c:
        mesh.set_mode(A, B, LinkMode.DROP_REQUESTS)
        c.sendall(b"".join(frame(b"lost %d" % i) for i in range(5)))
        wait_until("5 requests dropped", lambda: _link_stats(mesh)["requests_dropped"] == 5)
        assert echo.count() == 0
        mesh.heal()
        c.sendall(frame(b"after"))
        assert recv_frame(c) == b"after"  # the first answer: nothing dropped got through
    assert echo.received == [b"after"]
    assert _link_stats(mesh)["responses_dropped"] == 0


def test_drop_responses_drops_that_direction_only(mesh: ProxyMesh, echo: FrameEcho) -> None:
    with dial(mesh.port(A, B)) as c:
        mesh.set_mode(A, B, LinkMode.DROP_RESPONSES)
        c.sendall(b"".join(frame(b"unanswered %d" % i) for i in range(5)))
        wait_until("5 responses dropped", lambda: _link_stats(mesh)["responses_dropped"] == 5)
        assert echo.count() == 5
        mesh.heal(A)
        c.sendall(frame(b"after"))
        assert recv_frame(c) == b"after"
    assert _link_stats(mesh)["requests_dropped"] == 0


def test_cut_drops_both_ways_and_a_heal_passes_on_the_same_connection(
        mesh: ProxyMesh, echo: FrameEcho) -> None:
    with dial(mesh.port(A, B)) as c:
        c.sendall(frame(b"before"))
        assert recv_frame(c) == b"before"
        mesh.isolate(B)
        assert mesh.modes() == {(A, B): LinkMode.CUT}
        c.sendall(frame(b"into the hole"))
        wait_until("a request dropped", lambda: _link_stats(mesh)["requests_dropped"] == 1)
        with dial(mesh.port(A, B)):  # new connections are accepted while cut
            wait_until("accepted", lambda: _link_stats(mesh)["open_connections"] == 2)
        mesh.heal(B)
        c.sendall(frame(b"healed"))
        assert recv_frame(c) == b"healed"
    assert echo.received == [b"before", b"healed"]
    assert _link_stats(mesh)["connections"] == 2


def _dropped_with(seed: int, frames: int) -> int:
    echo = FrameEcho()
    try:
        with ProxyMesh(seed=seed) as m, dial(m.add_link(A, B, ("127.0.0.1", echo.port))) as c:
            m.set_mode(A, B, LinkMode.DROP_REQUESTS, loss=0.5)
            c.sendall(b"".join(frame(b"%d" % i) for i in range(frames)))
            wait_until("every frame decided", lambda: m.stats()[(A, B)]["requests_forwarded"]
                       + m.stats()[(A, B)]["requests_dropped"] == frames)
            return m.stats()[(A, B)]["requests_dropped"]
    finally:
        echo.close()


def test_loss_half_drops_a_count_fixed_by_the_seed() -> None:
    rng = random.Random(11)
    expected = sum(rng.random() < 0.5 for _ in range(200))
    assert _dropped_with(11, 200) == expected == _dropped_with(11, 200)
    assert 60 < expected < 140


@pytest.mark.parametrize("size", [64 * 1024 + 1, -1])
def test_a_bad_frame_length_closes_only_its_connection(mesh: ProxyMesh, size: int) -> None:
    with dial(mesh.port(A, B)) as good, dial(mesh.port(A, B)) as bad:
        good.sendall(frame(b"one"))
        assert recv_frame(good) == b"one"
        bad.sendall(struct.pack(">i", size) + b"x" * 100)
        assert recv_exact(bad, 1) == b""  # closed by the proxy
        good.sendall(frame(b"two"))
        assert recv_frame(good) == b"two"
    wait_until("counted", lambda: _link_stats(mesh)["oversized_frames"] == 1)


def test_an_upstream_that_refuses_closes_the_accepted_side() -> None:
    with socket.create_server(("127.0.0.1", 0)) as s:
        dead = int(s.getsockname()[1])  # closed below: nothing listens there
    with ProxyMesh() as m, dial(m.add_link(A, B, ("127.0.0.1", dead))) as c:
        assert recv_exact(c, 1) == b""
        wait_until("counted", lambda: m.stats()[(A, B)]["connect_failures"] == 1)


def test_close_leaves_no_thread_and_no_listener(echo: FrameEcho) -> None:
    m = ProxyMesh().start()
    port = m.add_link(A, B, ("127.0.0.1", echo.port))
    with dial(port) as c:
        c.sendall(frame(b"x"))
        assert recv_frame(c) == b"x"
        m.close()
        m.close()
        assert recv_exact(c, 1) == b""
    assert not [t for t in threading.enumerate() if t.name == "kraft-chaos-proxy"]
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=5).close()


def test_bad_requests_are_refused_clearly(mesh: ProxyMesh, echo: FrameEcho) -> None:
    with pytest.raises(KeyError, match="no link controller-3001 -> controller-3000"):
        mesh.set_mode(B, A, LinkMode.CUT)
    with pytest.raises(ValueError, match="loss 1.5"):
        mesh.set_mode(A, B, LinkMode.DROP_REQUESTS, loss=1.5)
    with pytest.raises(ValueError, match="exists already"):
        mesh.add_link(A, B, ("127.0.0.1", echo.port))
    with pytest.raises(KeyError, match="broker-9"):
        mesh.isolate("broker-9")


@pytest.fixture(scope="module")
def echo_mesh() -> Iterator[tuple[ProxyMesh, int]]:
    server = FrameEcho()
    with ProxyMesh() as m:
        yield m, m.add_link(A, B, ("127.0.0.1", server.port))
    server.close()


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(payloads=st.lists(st.binary(max_size=3000), min_size=1, max_size=12),
       cuts=st.lists(st.integers(min_value=1, max_value=40000), max_size=20))
def test_frames_split_anyhow_across_writes_are_relayed_byte_exact(
        echo_mesh: tuple[ProxyMesh, int], payloads: list[bytes], cuts: list[int]) -> None:
    _, port = echo_mesh
    stream = b"".join(frame(p) for p in payloads)
    points = sorted({c % len(stream) for c in cuts} | {0, len(stream)})
    with dial(port) as c:
        for lo, hi in zip(points, points[1:], strict=False):
            c.sendall(stream[lo:hi])
        assert recv_exact(c, len(stream)) == stream


def test_a_failure_serving_one_connection_closes_only_that_one(
        mesh: ProxyMesh, monkeypatch: pytest.MonkeyPatch) -> None:
    real = mesh._drops
    poison = [True]

    def drops_once_broken(link: object, request: bool) -> bool:
        if poison and request:
            poison.clear()
            raise RuntimeError("a bug in the proxy")
        return real(link, request)  # type: ignore[arg-type]

    monkeypatch.setattr(mesh, "_drops", drops_once_broken)
    with dial(mesh.port(A, B)) as broken:
        broken.sendall(frame(b"boom"))
        assert recv_exact(broken, 1) == b""
    with dial(mesh.port(A, B)) as fine:
        fine.sendall(frame(b"still here"))
        assert recv_frame(fine) == b"still here"
