"""--listeners / --control-plane-listener parsing and validation."""

from __future__ import annotations

import pytest

from adapters.network import ListenerConfigError, SocketServer, parse_listener_config
from adapters.network.listener_config import ListenerSpec
from fsm.values import Endpoint


def test_parse_two_listeners_with_a_control_plane() -> None:
    cfg = parse_listener_config("CONTROLLER://127.0.0.1:9093,PLAINTEXT://127.0.0.1:9092",
                                "CONTROLLER")
    assert cfg.control_plane == ListenerSpec("CONTROLLER", "127.0.0.1", 9093)
    assert cfg.data_plane == (ListenerSpec("PLAINTEXT", "127.0.0.1", 9092),)
    assert cfg.endpoints() == (Endpoint("CONTROLLER", "127.0.0.1", 9093),
                               Endpoint("PLAINTEXT", "127.0.0.1", 9092))


def test_names_are_upper_cased_and_ipv6_and_localhost_are_loopback() -> None:
    cfg = parse_listener_config("plaintext://[::1]:0, internal://localhost:9999", "internal")
    assert [(s.name, s.host, s.port) for s in cfg.listeners] == [
        ("PLAINTEXT", "::1", 0), ("INTERNAL", "localhost", 9999)]
    assert cfg.control_plane_listener == "INTERNAL"


def test_no_control_plane() -> None:
    cfg = parse_listener_config("PLAINTEXT://127.0.0.1:0", None)
    assert cfg.control_plane is None and len(cfg.data_plane) == 1


@pytest.mark.parametrize(("listeners", "cp", "message"), [
    ("", None, "no listener"),
    ("PLAINTEXT:/127.0.0.1:9092", None, "expected NAME://HOST:PORT"),
    ("PLAINTEXT://127.0.0.1:http", None, "not a number"),
    ("PLAINTEXT://127.0.0.1:70000", None, "out of range"),
    ("PLAINTEXT://127.0.0.1:-1", None, "out of range"),
    ("PLAINTEXT://:9092", None, "empty host"),
    ("PLAINTEXT://10.1.2.3:9092", None, "not a loopback"),
    ("PLAINTEXT://example.com:9092", None, "not a loopback"),
    ("A://127.0.0.1:1,A://127.0.0.1:2", None, "used twice"),
    ("A://127.0.0.1:5,B://127.0.0.1:5", None, "port 5 is used"),
    ("PLAINTEXT://127.0.0.1:9092", "CONTROLLER", "is not one of the listeners"),
    ("CONTROLLER://127.0.0.1:9093", "CONTROLLER", "only listener"),
])
def test_errors_are_clear(listeners: str, cp: str | None, message: str) -> None:
    with pytest.raises(ListenerConfigError, match=message):
        parse_listener_config(listeners, cp)


def test_non_loopback_needs_the_explicit_flag() -> None:
    cfg = parse_listener_config("PLAINTEXT://10.1.2.3:9092", allow_non_loopback=True)
    assert cfg.listeners[0].host == "10.1.2.3"


class _Nothing:
    def handle(self, *a: object) -> None:
        return None


def test_port_zero_binds_an_ephemeral_port_and_reports_it() -> None:
    cfg = parse_listener_config("CONTROLLER://127.0.0.1:0,PLAINTEXT://127.0.0.1:0",
                                "CONTROLLER")
    with SocketServer(cfg, _Nothing()) as server:
        ports = server.ports
        assert set(ports) == {"CONTROLLER", "PLAINTEXT"} and all(ports.values())
        assert ports["CONTROLLER"] != ports["PLAINTEXT"]
        assert server.endpoints() == (Endpoint("CONTROLLER", "127.0.0.1", ports["CONTROLLER"]),
                                      Endpoint("PLAINTEXT", "127.0.0.1", ports["PLAINTEXT"]))
        taken = ports["PLAINTEXT"]
        clash = parse_listener_config(f"PLAINTEXT://127.0.0.1:{taken}")
        with pytest.raises(OSError, match="cannot bind listener PLAINTEXT"):
            SocketServer(clash, _Nothing()).start()
