"""The value types of a KRaft node's configuration keys, each parsed with a ``ConfigError`` that
names the key and says why: integers in a range, booleans, comma lists, listener endpoints
(``NAME://host:port``), the quorum's voters (``id@host:port``) and the listener to protocol map.
``properties`` puts them together into ``NodeSettings``.

Values are trimmed first, as Kafka's ``ConfigDef`` trims every typed value.
"""

from __future__ import annotations

import re

from adapters.kraft_node.settings import Address
from adapters.raft_node.args import MAX_VOTERS

INT32_MAX = 2**31 - 1
SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
"""Kafka's security protocols; kcontrol serves PLAINTEXT only."""
_INT = re.compile(r"[+-]?[0-9]+")
_DIGITS = re.compile(r"[0-9]+")
_NAME = re.compile(r"[A-Za-z0-9_.\-]+")


class ConfigError(ValueError):
    """A configuration value that cannot be used: ``key`` is the configuration key (or the file,
    or ``--override``), ``message`` why."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{key}: {message}")
        self.key = key
        self.message = message


def parse_int(key: str, text: str, low: int, high: int) -> int:
    value = text.strip()
    if not _INT.fullmatch(value):
        raise ConfigError(key, f"{text!r} is not an integer")
    number = int(value)
    if not low <= number <= high:
        bound = f"at least {low}" if high >= INT32_MAX else f"{low}-{high}"
        raise ConfigError(key, f"{number} is out of range (want {bound})")
    return number


def parse_bool(key: str, text: str) -> bool:
    value = text.strip().lower()
    if value not in ("true", "false"):
        raise ConfigError(key, f"{text!r} is not a boolean (want true or false)")
    return value == "true"


def parse_list(key: str, text: str) -> list[str]:
    """A comma list: items trimmed, empty items refused (``a,,b``), an empty text is []."""
    if not text.strip():
        return []
    items = [item.strip() for item in text.split(",")]
    if any(not item for item in items):
        raise ConfigError(key, f"{text!r} has an empty item")
    return items


def listener_name(key: str, text: str) -> str:
    """A listener name, normalised to upper case as Kafka's ``ListenerName.normalised``."""
    if not _NAME.fullmatch(text):
        raise ConfigError(key, f"{text!r} is not a listener name (letters, digits, '_', '-', "
                               "'.')")
    return text.upper()


def parse_names(key: str, text: str) -> tuple[str, ...]:
    """A comma list of listener names, each once."""
    names = [listener_name(key, item) for item in parse_list(key, text)]
    for name in names:
        if names.count(name) > 1:
            raise ConfigError(key, f"names listener {name} twice")
    return tuple(names)


def _host_port(key: str, entry: str, address: str) -> tuple[str, str]:
    """Split ``host:port`` or ``[v6]:port``."""
    if address.startswith("["):
        host, close, rest = address[1:].partition("]")
        if not close or not rest.startswith(":"):
            raise ConfigError(key, f"entry {entry!r}: want [ipv6-address]:port")
        return host, rest[1:]
    host, colon, port = address.rpartition(":")
    if not colon:
        raise ConfigError(key, f"entry {entry!r}: no port (want host:port)")
    return host, port


def _port(key: str, entry: str, text: str, low: int) -> int:
    if not _DIGITS.fullmatch(text) or not low <= int(text) <= 65535:
        raise ConfigError(key, f"entry {entry!r}: port {text!r} is not in {low}-65535")
    return int(text)


def _check_host(key: str, entry: str, host: str) -> None:
    if not host:
        raise ConfigError(key, f"entry {entry!r} has no host: kcontrol listens on explicit "
                               "addresses (say 0.0.0.0 for every interface)")
    if any(c.isspace() or c in "/@," for c in host):
        raise ConfigError(key, f"entry {entry!r}: {host!r} is not a host name or address")


def parse_endpoints(key: str, text: str, *, advertised: bool = False) -> dict[str, Address]:
    """``NAME://host:port,...`` -> {NAME: (host, port)}: names unique (upper-cased), ports unique
    unless 0 (any free port). Advertised endpoints are where clients connect: a real port, and
    not the 0.0.0.0 meta-address (Kafka refuses it too)."""
    endpoints: dict[str, Address] = {}
    for entry in parse_list(key, text):
        name, sep, address = entry.partition("://")
        if not sep:
            raise ConfigError(key, f"entry {entry!r}: want NAME://host:port")
        name = listener_name(key, name)
        host, port_text = _host_port(key, entry, address)
        _check_host(key, entry, host)
        port = _port(key, entry, port_text, 1 if advertised else 0)
        if advertised and host in ("0.0.0.0", "::"):
            raise ConfigError(key, f"entry {entry!r}: {host} is not an address a client can "
                                   "connect to; advertise a routable one")
        if name in endpoints:
            raise ConfigError(key, f"names listener {name} twice")
        if port and not advertised and any(p == port for _, p in endpoints.values()):
            raise ConfigError(key, f"entry {entry!r}: port {port} is already another "
                                   "listener's")
        endpoints[name] = (host, port)
    return endpoints


def parse_voters(key: str, text: str) -> dict[int, Address]:
    """``id@host:port,...`` -> {id: (host, port)}, as ``adapters.raft_node.args.parse_voters``
    (ids >= 0 and once each, ports 1-65535, at most ``MAX_VOTERS``), the messages naming
    ``key``."""
    voters: dict[int, Address] = {}
    entries = parse_list(key, text)
    if not entries:
        raise ConfigError(key, "is empty: want id@host:port[,id@host:port...]")
    for entry in entries:
        ident, at, address = entry.partition("@")
        if not at:
            raise ConfigError(key, f"entry {entry!r}: want id@host:port")
        if not _INT.fullmatch(ident.strip()):
            raise ConfigError(key, f"entry {entry!r}: the id {ident!r} is not an integer")
        node_id = int(ident)
        if not 0 <= node_id <= INT32_MAX:
            raise ConfigError(key, f"entry {entry!r}: a node id is 0-{INT32_MAX}")
        host, port_text = _host_port(key, entry, address.strip())
        _check_host(key, entry, host)
        port = _port(key, entry, port_text, 1)
        if node_id in voters:
            raise ConfigError(key, f"names node {node_id} twice")
        voters[node_id] = (host, port)
    if len(voters) > MAX_VOTERS:
        raise ConfigError(key, f"names {len(voters)} voters; at most {MAX_VOTERS}")
    return voters


def parse_protocol_map(key: str, text: str) -> dict[str, str]:
    """``NAME:PROTOCOL,...`` -> {NAME: PROTOCOL} (both upper-cased); unknown protocols refused
    here, known ones other than PLAINTEXT where a listener uses them (``properties``)."""
    result: dict[str, str] = {}
    for entry in parse_list(key, text):
        name, colon, protocol = entry.partition(":")
        if not colon:
            raise ConfigError(key, f"entry {entry!r}: want LISTENER:PROTOCOL")
        name = listener_name(key, name.strip())
        protocol = protocol.strip().upper()
        if protocol not in SECURITY_PROTOCOLS:
            raise ConfigError(key, f"entry {entry!r}: unknown security protocol {protocol!r} "
                                   f"(Kafka's are {', '.join(SECURITY_PROTOCOLS)})")
        if name in result:
            raise ConfigError(key, f"names listener {name} twice")
        result[name] = protocol
    return result
