"""A KRaft node's properties file (and ``--override key=value`` strings) -> ``NodeSettings``,
checked: every refusal is a ``ConfigError`` naming the key and saying why, so ``kcontrol node``
and ``kcontrol storage`` refuse a bad file at start with one clear line.

The checks follow Kafka's ``KafkaConfig.validateValues`` for KRaft mode (3.x):

- ``process.roles`` (required; broker, controller or both, each once) and ``node.id``
  (required, >= 0); ``broker.id``, if set, equals ``node.id``.
- ``controller.quorum.voters`` (required): a controller is one of the voters and its first
  controller listener listens at its voters entry; a broker-only node is not a voter.
- ``controller.listener.names`` (required for every role: a broker needs it to reach the
  controllers). A controller has every controller listener in ``listeners``, and a
  controller-only node nothing else (and no ``advertised.listeners``); a broker-only node has
  none of them in ``listeners``. A broker has a listener that is not a controller listener,
  advertises no controller listener, and ``inter.broker.listener.name`` (default PLAINTEXT) is
  one of its advertised listeners.
- Every listener used speaks PLAINTEXT (``listener.security.protocol.map``; without one, a
  listener named like a protocol speaks it and the controller listeners speak PLAINTEXT, as in
  Kafka); SSL and SASL are refused: kcontrol does not serve them.
- ``log.dirs`` (else ``log.dir``) is required -- Kafka's default of ``/tmp/kafka-logs`` is
  not taken: a node's storage is chosen, not guessed; ``metadata.log.dir`` defaults to the
  first of them.
- Ours: ``broker.heartbeat.interval.ms`` < ``broker.session.timeout.ms`` (a broker would
  lose its session between two heartbeats); integer keys in range.

ZooKeeper-mode keys: ``control.plane.listener.name`` is refused ("not supported in KRaft mode",
as Kafka refuses it). ``zookeeper.connect`` is refused too: Kafka accepts it next to
``process.roles`` only for a ZooKeeper migration (``zookeeper.metadata.migration.enable``),
which kcontrol does not do, so in a KRaft node's file it is a mistake. Kafka ignores
``broker.id.generation.enable`` and the other ``zookeeper.*`` keys in KRaft mode; we warn that
they are not used. Other keys we do not interpret are kept in ``settings.extra``; an unknown
``kcontrol.*`` key (our own namespace) is refused, as a typo.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any

from adapters.kraft_node.config_values import (
    INT32_MAX,
    ConfigError,
    listener_name,
    parse_bool,
    parse_endpoints,
    parse_int,
    parse_list,
    parse_names,
    parse_protocol_map,
    parse_voters,
)
from adapters.kraft_node.java_properties import PropertiesSyntaxError, read_properties
from adapters.kraft_node.settings import BROKER, CONTROLLER, ROLES, Address, NodeSettings

__all__ = ["ConfigError", "load_settings", "load_properties", "apply_overrides",
           "settings_from_properties", "INT_KEYS"]

Warn = Callable[[str], None]

INT_KEYS: dict[str, tuple[str, int, int]] = {
    "broker.heartbeat.interval.ms": ("broker_heartbeat_interval_ms", 1, INT32_MAX),
    "broker.session.timeout.ms": ("broker_session_timeout_ms", 1, INT32_MAX),
    "initial.broker.registration.timeout.ms": ("initial_broker_registration_timeout_ms", 1,
                                               INT32_MAX),
    "controller.quorum.election.timeout.ms": ("controller_quorum_election_timeout_ms", 1,
                                              INT32_MAX),
    "controller.quorum.fetch.timeout.ms": ("controller_quorum_fetch_timeout_ms", 1, INT32_MAX),
    "controller.quorum.election.backoff.max.ms": ("controller_quorum_election_backoff_max_ms",
                                                  0, INT32_MAX),
    "controller.quorum.request.timeout.ms": ("controller_quorum_request_timeout_ms", 1,
                                             INT32_MAX),
    "controller.quorum.retry.backoff.ms": ("controller_quorum_retry_backoff_ms", 0, INT32_MAX),
    "num.partitions": ("num_partitions", 1, INT32_MAX),
    "default.replication.factor": ("default_replication_factor", 1, 32767),
    "kcontrol.admin.port": ("admin_port", 0, 65535),
    "kcontrol.metrics.port": ("metrics_port", 0, 65535),
    "kcontrol.metadata.snapshot.every.records": ("metadata_snapshot_every_records", 0,
                                                 2**63 - 1),
}
"""key -> (NodeSettings field, lowest, highest)."""

BOOL_KEYS: dict[str, str] = {
    "kcontrol.isr.expander.enable": "isr_expander_enable",
}
"""Our own boolean keys -> their ``NodeSettings`` field (default true)."""
KNOWN_KEYS = frozenset({
    "process.roles", "node.id", "broker.id", "controller.quorum.voters",
    "controller.listener.names", "listeners", "advertised.listeners",
    "listener.security.protocol.map", "inter.broker.listener.name",
    "security.inter.broker.protocol", "log.dirs", "log.dir", "metadata.log.dir",
    "controlled.shutdown.enable", "broker.rack", *BOOL_KEYS, *INT_KEYS})
NOT_USED_IN_KRAFT = ("broker.id.generation.enable", "reserved.broker.max.id")
"""Keys Kafka ignores in KRaft mode (as it does every ``zookeeper.*`` key but
``zookeeper.connect``): a warning."""
DEFAULT_PROTOCOLS = {p: p for p in ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")}
"""Kafka's default ``listener.security.protocol.map``: each protocol's name maps to itself."""


def _default(name: str) -> Any:
    return next(f.default for f in fields(NodeSettings) if f.name == name)


def load_properties(path: Path | str) -> dict[str, str]:
    """The pairs of the properties file ``path``; a ``ConfigError`` naming the file when it
    cannot be read."""
    try:
        return read_properties(Path(path))
    except FileNotFoundError:
        raise ConfigError(str(path), "no such file") from None
    except IsADirectoryError:
        raise ConfigError(str(path), "is a directory, not a properties file") from None
    except OSError as exc:
        raise ConfigError(str(path), f"cannot be read ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(str(path), f"is not UTF-8 text (byte {exc.start})") from None
    except PropertiesSyntaxError as exc:
        raise ConfigError(str(path), str(exc)) from None


def apply_overrides(props: Mapping[str, str], overrides: Iterable[str]) -> dict[str, str]:
    """``props`` with each ``key=value`` of ``overrides`` set in turn (the later wins)."""
    result = dict(props)
    for text in overrides:
        key, eq, value = text.partition("=")
        if not eq or not key.strip():
            raise ConfigError("--override", f"{text!r}: want key=value")
        result[key.strip()] = value
    return result


def load_settings(path: Path | str | None, overrides: Iterable[str] = (),
                  warn: Warn | None = None) -> NodeSettings:
    """``NodeSettings`` from the properties file ``path`` and ``--override`` strings; with no
    file, the overrides are the whole configuration."""
    props = {} if path is None else load_properties(path)
    return settings_from_properties(apply_overrides(props, overrides), warn)


def _value(props: Mapping[str, str], key: str) -> str | None:
    """The trimmed value of ``key``, None when absent or blank."""
    text = props.get(key)
    if text is None or not text.strip():
        return None
    return text.strip()


def _required(props: Mapping[str, str], key: str, why: str = "") -> str:
    value = _value(props, key)
    if value is None:
        raise ConfigError(key, "is required" + (f" ({why})" if why else ""))
    return value


def settings_from_properties(props: Mapping[str, str], warn: Warn | None = None
                             ) -> NodeSettings:
    """Check ``props`` (a parsed properties file) and build ``NodeSettings``; ``warn`` is told
    of keys that do nothing in KRaft mode."""
    _zookeeper_keys(props, warn or (lambda _message: None))
    roles = _roles(props)
    node_id = parse_int("node.id", _required(props, "node.id", "a KRaft node's id"), 0,
                        INT32_MAX)
    broker_id = _value(props, "broker.id")
    if broker_id is not None and parse_int("broker.id", broker_id, -1, INT32_MAX) != node_id:
        raise ConfigError("broker.id", f"{broker_id} differs from node.id {node_id}: set them "
                                       "equal or leave broker.id out")
    voters = parse_voters("controller.quorum.voters", _required(
        props, "controller.quorum.voters",
        "id@host:port of every controller; dynamic quorums are not supported"))
    controller_names = parse_names("controller.listener.names", _required(
        props, "controller.listener.names",
        "every node needs it: a broker uses the first to reach the controllers"))
    listeners = parse_endpoints("listeners", _required(props, "listeners"))
    advertised = _advertised(props, roles, listeners, controller_names)
    _check_voter_membership(roles, node_id, voters)
    _check_listeners(roles, node_id, voters, listeners, controller_names)
    _check_protocols(props, listeners, controller_names)
    inter_broker = _inter_broker(props, roles, advertised, controller_names)
    log_dirs, metadata_log_dir = _dirs(props)
    ints = {name: parse_int(key, text, low, high)
            for key, (name, low, high) in INT_KEYS.items()
            if (text := _value(props, key)) is not None}
    _check_heartbeat(ints)
    bools = {name: parse_bool(key, text) for key, name in BOOL_KEYS.items()
             if (text := _value(props, key)) is not None}
    shutdown = _value(props, "controlled.shutdown.enable")
    extra = {k: v for k, v in props.items() if k not in KNOWN_KEYS}
    for key in extra:
        if key.startswith("kcontrol."):
            raise ConfigError(key, "unknown kcontrol key (ours are: " + ", ".join(
                sorted(k for k in (*INT_KEYS, *BOOL_KEYS) if k.startswith("kcontrol."))) + ")")
    return NodeSettings(
        process_roles=roles, node_id=node_id, quorum_voters=voters,
        controller_listener_names=controller_names, listeners=listeners,
        metadata_log_dir=metadata_log_dir, log_dirs=log_dirs, advertised_listeners=advertised,
        inter_broker_listener_name=inter_broker,
        controlled_shutdown_enable=(True if shutdown is None
                                    else parse_bool("controlled.shutdown.enable", shutdown)),
        rack=_value(props, "broker.rack"), extra=extra, **ints, **bools)


def _zookeeper_keys(props: Mapping[str, str], warn: Warn) -> None:
    if _value(props, "zookeeper.connect") is not None:
        raise ConfigError("zookeeper.connect", "a KRaft node (process.roles is set) does not "
                          "use ZooKeeper; remove it (kcontrol does no ZooKeeper migration)")
    if _value(props, "control.plane.listener.name") is not None:
        raise ConfigError("control.plane.listener.name", "is not supported in KRaft mode "
                          "(controllers do not send requests to brokers)")
    for key in props:
        if key in NOT_USED_IN_KRAFT or key.startswith("zookeeper."):
            warn(f"{key}: not used in KRaft mode (ignored)")


def _roles(props: Mapping[str, str]) -> frozenset[str]:
    key = "process.roles"
    items = parse_list(key, _required(props, key, "broker, controller or broker,controller"))
    for item in items:
        if item not in ROLES:
            raise ConfigError(key, f"unknown role {item!r} (want broker, controller or both)")
        if items.count(item) > 1:
            raise ConfigError(key, f"names the role {item} twice")
    return frozenset(items)


def _check_voter_membership(roles: frozenset[str], node_id: int,
                            voters: dict[int, Address]) -> None:
    ids = ",".join(map(str, voters))
    if CONTROLLER in roles and node_id not in voters:
        raise ConfigError("controller.quorum.voters", f"a controller is a voter, but node.id "
                                                      f"{node_id} is not one of {ids}")
    if roles == {BROKER} and node_id in voters:
        raise ConfigError("controller.quorum.voters", f"node.id {node_id} is a voter, but "
                          "process.roles is broker only: a voter must have the controller role")


def _check_listeners(roles: frozenset[str], node_id: int, voters: dict[int, Address],
                     listeners: dict[str, Address], controller_names: tuple[str, ...]) -> None:
    listed = [n for n in controller_names if n in listeners]
    if CONTROLLER in roles:
        missing = [n for n in controller_names if n not in listeners]
        if missing:
            raise ConfigError("controller.listener.names", f"{', '.join(missing)} is not in "
                              "listeners: a controller listens on every controller listener")
        first = controller_names[0]
        if listeners[first] != voters[node_id]:
            host, port = listeners[first]
            vhost, vport = voters[node_id]
            raise ConfigError("listeners", f"controller listener {first} is {host}:{port}, but "
                              f"node {node_id}'s entry of controller.quorum.voters is "
                              f"{vhost}:{vport}: they must be the same address")
        if BROKER not in roles:
            others = [n for n in listeners if n not in controller_names]
            if others:
                raise ConfigError("listeners", f"{', '.join(others)} is not a controller "
                                  "listener: a controller-only node has only controller "
                                  "listeners (controller.listener.names)")
    else:
        if listed:
            raise ConfigError("listeners", f"{', '.join(listed)} is a controller listener "
                              "(controller.listener.names), but process.roles is broker only")
    if BROKER in roles and len(listed) == len(listeners):
        raise ConfigError("listeners", "a broker needs a listener that is not a controller "
                          "listener, for its clients")


def _advertised(props: Mapping[str, str], roles: frozenset[str],
                listeners: dict[str, Address], controller_names: tuple[str, ...]
                ) -> dict[str, Address]:
    key = "advertised.listeners"
    text = _value(props, key)
    if BROKER not in roles:
        if text is not None:
            raise ConfigError(key, "must be empty when process.roles is controller only "
                                   "(clients do not connect to controllers)")
        return {}
    if text is None:
        return {n: a for n, a in listeners.items() if n not in controller_names}
    advertised = parse_endpoints(key, text, advertised=True)
    for name in advertised:
        if name in controller_names:
            raise ConfigError(key, f"{name} is a controller listener: clients only send "
                                   "requests to brokers")
        if name not in listeners:
            raise ConfigError(key, f"{name} is not one of listeners ({', '.join(listeners)})")
    return advertised


def _check_protocols(props: Mapping[str, str], listeners: dict[str, Address],
                     controller_names: tuple[str, ...]) -> None:
    key = "listener.security.protocol.map"
    text = _value(props, key)
    if text is None:
        protocols = {**DEFAULT_PROTOCOLS, **{n: "PLAINTEXT" for n in controller_names}}
    else:
        protocols = parse_protocol_map(key, text)
    for name in [*listeners, *(n for n in controller_names if n not in listeners)]:
        protocol = protocols.get(name)
        if protocol is None:
            raise ConfigError(key, f"listener {name} has no security protocol: add "
                                   f"{name}:PLAINTEXT")
        if protocol != "PLAINTEXT":
            raise ConfigError(key, f"listener {name} uses {protocol}: kcontrol supports only "
                                   "PLAINTEXT")


def _inter_broker(props: Mapping[str, str], roles: frozenset[str],
                  advertised: dict[str, Address], controller_names: tuple[str, ...]) -> str:
    key = "inter.broker.listener.name"
    text = _value(props, key)
    protocol = _value(props, "security.inter.broker.protocol")
    if protocol is not None:
        if text is not None:
            raise ConfigError(key, "set only one of inter.broker.listener.name and "
                                   "security.inter.broker.protocol")
        if protocol.upper() != "PLAINTEXT":
            raise ConfigError("security.inter.broker.protocol", f"{protocol}: kcontrol "
                              "supports only PLAINTEXT")
    name = listener_name(key, text) if text is not None else "PLAINTEXT"
    if BROKER not in roles:
        return name
    if name in controller_names:
        raise ConfigError(key, f"{name} is a controller listener; brokers talk to each other "
                               "on a broker listener")
    if name not in advertised:
        raise ConfigError(key, f"{name} is not one of the broker's advertised listeners "
                               f"({', '.join(advertised)})")
    return name


def _dirs(props: Mapping[str, str]) -> tuple[tuple[Path, ...], Path]:
    key = "log.dirs" if _value(props, "log.dirs") is not None else "log.dir"
    text = _value(props, key)
    if text is None:
        raise ConfigError("log.dirs", "is required (or log.dir): the directories this node "
                                      "keeps its data in")
    paths = [Path(p) for p in parse_list(key, text)]
    metadata = _value(props, "metadata.log.dir")
    for name, path in [*((key, p) for p in paths),
                       *([("metadata.log.dir", Path(metadata))] if metadata else [])]:
        if any(ord(c) < 32 or "\ud800" <= c <= "\udfff" for c in str(path)):
            raise ConfigError(name, f"{str(path)!r} holds a control character or a lone "
                                    "surrogate: not a path")
    for path in paths:
        if paths.count(path) > 1:
            raise ConfigError(key, f"names {path} twice")
    return tuple(paths), Path(metadata) if metadata is not None else paths[0]


def _check_heartbeat(ints: dict[str, int]) -> None:
    interval = ints.get("broker_heartbeat_interval_ms",
                        _default("broker_heartbeat_interval_ms"))
    session = ints.get("broker_session_timeout_ms", _default("broker_session_timeout_ms"))
    if interval >= session:
        raise ConfigError("broker.heartbeat.interval.ms", f"{interval} is not less than "
                          f"broker.session.timeout.ms {session}: a broker would lose its "
                          "session between two heartbeats")
