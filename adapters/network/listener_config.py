"""Kafka-style listener configuration: ``--listeners`` and ``--control-plane-listener``.

``parse_listener_config("CONTROLLER://127.0.0.1:9093,PLAINTEXT://127.0.0.1:9092",
"CONTROLLER")`` -> :class:`ListenerConfig`. Rules (errors are :class:`ListenerConfigError`
with a message naming the offending entry):

- each entry is ``NAME://HOST:PORT`` (IPv6 hosts in brackets: ``[::1]:9092``); ``NAME`` is
  letters, digits and ``_``, upper-cased; names are unique; at most one entry per
  non-zero port;
- ``PORT`` is 0..65535; 0 binds an ephemeral port (the server reports the bound one);
- ``HOST`` must be a loopback address (``127.x.y.z``, ``::1``, ``localhost``) unless
  ``allow_non_loopback`` is given (an explicit flag: kcontrol is a lab tool); the listener
  checks again the address it is about to bind (a config built directly, a host name that
  resolves elsewhere) and refuses a non-loopback one unless the config carries the flag;
- ``control_plane_listener`` (KIP-291's ``control.plane.listener.name``), when given, names
  one of the listeners, and at least one *other* listener must remain for the data plane.

Every listener speaks PLAINTEXT (no TLS/SASL here); the security protocol is recorded so
``endpoints()`` can be published in ``/brokers/ids/<id>`` as Kafka does.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, replace

from fsm.values import Endpoint

_ENTRY = re.compile(r"^(?P<name>[A-Za-z0-9_]+)://(?P<host>\[[^\]]*\]|[^:/\[\]]*):(?P<port>[^:]*)$")


class ListenerConfigError(ValueError):
    """A listener string or control-plane name that cannot be used."""


@dataclass(frozen=True, slots=True)
class ListenerSpec:
    name: str
    host: str
    port: int  # 0: ephemeral
    security_protocol: str = "PLAINTEXT"

    def endpoint(self, port: int | None = None) -> Endpoint:
        return Endpoint(self.name, self.host, self.port if port is None else port,
                        self.security_protocol)


@dataclass(frozen=True, slots=True)
class ListenerConfig:
    listeners: tuple[ListenerSpec, ...]
    control_plane_listener: str | None = None
    allow_non_loopback: bool = False
    """Checked again when a listener binds: the address a host resolves to must be loopback
    unless this is set (``parse_listener_config(..., allow_non_loopback=True)``)."""

    @property
    def control_plane(self) -> ListenerSpec | None:
        return next((ls for ls in self.listeners if ls.name == self.control_plane_listener),
                    None)

    @property
    def data_plane(self) -> tuple[ListenerSpec, ...]:
        return tuple(ls for ls in self.listeners if ls.name != self.control_plane_listener)

    def listener(self, name: str) -> ListenerSpec:
        for ls in self.listeners:
            if ls.name == name:
                return ls
        raise KeyError(name)

    def with_ports(self, ports: dict[str, int]) -> ListenerConfig:
        """The same config with the bound ports filled in (port 0 resolved)."""
        return replace(self, listeners=tuple(replace(ls, port=ports.get(ls.name, ls.port))
                                             for ls in self.listeners))

    def endpoints(self) -> tuple[Endpoint, ...]:
        return tuple(ls.endpoint() for ls in self.listeners)


def parse_listener_config(listeners: str, control_plane_listener: str | None = None, *,
                          allow_non_loopback: bool = False) -> ListenerConfig:
    specs = parse_listeners(listeners, allow_non_loopback=allow_non_loopback)
    cp = None
    if control_plane_listener is not None and control_plane_listener.strip():
        cp = control_plane_listener.strip().upper()
        names = [s.name for s in specs]
        if cp not in names:
            raise ListenerConfigError(
                f"control-plane listener {control_plane_listener!r} is not one of the "
                f"listeners ({', '.join(names)})")
        if len(specs) < 2:
            raise ListenerConfigError(
                f"control-plane listener {cp} is the only listener: a data-plane listener "
                f"(e.g. PLAINTEXT://127.0.0.1:9092) is needed for clients")
    return ListenerConfig(specs, cp, allow_non_loopback)


def parse_listeners(value: str, *, allow_non_loopback: bool = False) -> tuple[ListenerSpec, ...]:
    entries = [e.strip() for e in value.split(",") if e.strip()]
    if not entries:
        raise ListenerConfigError("no listener given (expected NAME://HOST:PORT,...)")
    specs: list[ListenerSpec] = []
    for entry in entries:
        spec = _parse_entry(entry, allow_non_loopback)
        if any(s.name == spec.name for s in specs):
            raise ListenerConfigError(f"listener name {spec.name} is used twice")
        if spec.port and any(s.port == spec.port for s in specs):
            raise ListenerConfigError(f"port {spec.port} is used by two listeners")
        specs.append(spec)
    return tuple(specs)


def _parse_entry(entry: str, allow_non_loopback: bool) -> ListenerSpec:
    m = _ENTRY.match(entry)
    if m is None:
        raise ListenerConfigError(f"listener {entry!r}: expected NAME://HOST:PORT")
    name, host, port_s = m["name"].upper(), m["host"], m["port"]
    if host.startswith("["):
        host = host[1:-1]
    if not host:
        raise ListenerConfigError(f"listener {entry!r}: empty host (binding every interface "
                                  f"is not supported; name one)")
    try:
        port = int(port_s)
    except ValueError:
        raise ListenerConfigError(f"listener {entry!r}: port {port_s!r} is not a number") \
            from None
    if not 0 <= port <= 65535:
        raise ListenerConfigError(f"listener {entry!r}: port {port} is out of range 0-65535")
    if not allow_non_loopback and not is_loopback(host):
        raise ListenerConfigError(
            f"listener {entry!r}: host {host} is not a loopback address; pass the "
            f"allow-non-loopback flag to listen on it")
    return ListenerSpec(name, host, port)


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
