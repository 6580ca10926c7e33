"""A KRaft node's configuration: what a good file becomes, and every refusal naming its key (each
case a file a parser without that rule would accept)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import settings as settings_
from hypothesis import strategies as st

from adapters.kraft_node.properties import (
    ConfigError,
    apply_overrides,
    load_settings,
    settings_from_properties,
)

VOTERS = "1@127.0.0.1:19091,2@127.0.0.1:19092,3@127.0.0.1:19093"
COMBINED = {
    "process.roles": "broker,controller",
    "node.id": "1",
    "controller.quorum.voters": VOTERS,
    "controller.listener.names": "CONTROLLER",
    "listeners": "PLAINTEXT://127.0.0.1:19191,CONTROLLER://127.0.0.1:19091",
    "log.dirs": "/tmp/kc-a,/tmp/kc-b",
}
BROKER = {**COMBINED, "process.roles": "broker", "node.id": "4",
          "listeners": "PLAINTEXT://127.0.0.1:19194"}
CONTROLLER = {**COMBINED, "process.roles": "controller", "listeners":
              "CONTROLLER://127.0.0.1:19091"}


def settings(base: dict[str, str], **changes: str | None):  # type: ignore[no-untyped-def]
    props = dict(base)
    for key, value in changes.items():
        key = key.replace("_", ".")
        if value is None:
            props.pop(key, None)
        else:
            props[key] = value
    return settings_from_properties(props)


def test_a_combined_node() -> None:
    s = settings(COMBINED, num_partitions="3")
    assert s.process_roles == {"broker", "controller"} and s.node_id == 1
    assert s.quorum_voters == {1: ("127.0.0.1", 19091), 2: ("127.0.0.1", 19092),
                               3: ("127.0.0.1", 19093)}
    assert s.listeners == {"PLAINTEXT": ("127.0.0.1", 19191), "CONTROLLER": ("127.0.0.1", 19091)}
    assert s.advertised_listeners == {"PLAINTEXT": ("127.0.0.1", 19191)}
    assert s.log_dirs == (Path("/tmp/kc-a"), Path("/tmp/kc-b"))
    assert s.metadata_log_dir == Path("/tmp/kc-a")
    assert s.num_partitions == 3 and s.broker_heartbeat_interval_ms == 2000
    assert s.controller_address == ("127.0.0.1", 19091)


def test_a_broker_and_a_controller_node() -> None:
    b = settings(BROKER)
    assert b.is_broker and not b.is_controller and b.controller_listener_names == ("CONTROLLER",)
    c = settings(CONTROLLER)
    assert c.is_controller and not c.is_broker and c.advertised_listeners == {}


def test_every_typed_key_is_read() -> None:
    s = settings(COMBINED, **{
        "broker_heartbeat_interval_ms": " 500 ", "broker_session_timeout_ms": "4000",
        "initial_broker_registration_timeout_ms": "7000",
        "controller_quorum_election_timeout_ms": "300", "controller_quorum_fetch_timeout_ms": "600",
        "controller_quorum_election_backoff_max_ms": "0",
        "controller_quorum_request_timeout_ms": "900", "controller_quorum_retry_backoff_ms": "5",
        "default_replication_factor": "3", "kcontrol_admin_port": "19500",
        "kcontrol_metrics_port": "19501", "kcontrol_metadata_snapshot_every_records": "1000",
        "controlled_shutdown_enable": "FALSE", "broker_rack": "rack-a",
        "kcontrol_isr_expander_enable": "False", "metadata_log_dir": "/tmp/kc-meta", "inter_broker_listener_name": "plaintext",
        "num_network_threads": "3"})
    assert (s.broker_heartbeat_interval_ms, s.broker_session_timeout_ms) == (500, 4000)
    assert s.initial_broker_registration_timeout_ms == 7000
    assert (s.controller_quorum_election_timeout_ms, s.controller_quorum_fetch_timeout_ms,
            s.controller_quorum_election_backoff_max_ms, s.controller_quorum_request_timeout_ms,
            s.controller_quorum_retry_backoff_ms) == (300, 600, 0, 900, 5)
    assert (s.default_replication_factor, s.admin_port, s.metrics_port) == (3, 19500, 19501)
    assert s.metadata_snapshot_every_records == 1000
    assert s.controlled_shutdown_enable is False and s.rack == "rack-a"
    assert s.isr_expander_enable is False and settings(COMBINED).isr_expander_enable is True
    assert s.metadata_log_dir == Path("/tmp/kc-meta")
    assert s.inter_broker_listener_name == "PLAINTEXT"
    assert s.extra == {"num.network.threads": "3"}


def test_listener_names_are_case_insensitive_and_ipv6_hosts_are_bracketed() -> None:
    s = settings(COMBINED, controller_listener_names="controller",
                 controller_quorum_voters="1@[::1]:19091",
                 listeners="plaintext://[::1]:19191,Controller://[::1]:19091")
    assert s.listeners == {"PLAINTEXT": ("::1", 19191), "CONTROLLER": ("::1", 19091)}
    assert s.quorum_voters == {1: ("::1", 19091)}


def test_log_dir_stands_in_for_log_dirs_and_broker_id_may_equal_node_id() -> None:
    s = settings(COMBINED, log_dirs=None, log_dir="/tmp/kc-one", broker_id="1")
    assert s.log_dirs == (Path("/tmp/kc-one"),)


def test_an_explicit_protocol_map_and_advertised_listeners() -> None:
    s = settings(COMBINED, listener_security_protocol_map="INTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT",
                 listeners="INTERNAL://0.0.0.0:19191,CONTROLLER://127.0.0.1:19091",
                 advertised_listeners="INTERNAL://localhost:19191",
                 inter_broker_listener_name="INTERNAL")
    assert s.advertised_listeners == {"INTERNAL": ("localhost", 19191)}
    assert s.inter_broker_listener_name == "INTERNAL"


REFUSED = [
    # (base, changes, key, fragment of the message)
    (COMBINED, {"process.roles": None}, "process.roles", "required"),
    (COMBINED, {"process.roles": "broker,zookeeper"}, "process.roles", "unknown role"),
    (COMBINED, {"process.roles": "broker,broker"}, "process.roles", "twice"),
    (COMBINED, {"node.id": None}, "node.id", "required"),
    (COMBINED, {"node.id": "-1"}, "node.id", "out of range"),
    (COMBINED, {"node.id": "one"}, "node.id", "not an integer"),
    (COMBINED, {"broker.id": "2"}, "broker.id", "differs from node.id 1"),
    (COMBINED, {"controller.quorum.voters": None}, "controller.quorum.voters", "required"),
    (COMBINED, {"controller.quorum.voters": "1@127.0.0.1"}, "controller.quorum.voters",
     "no port"),
    (COMBINED, {"controller.quorum.voters": "x@127.0.0.1:1"}, "controller.quorum.voters",
     "not an integer"),
    (COMBINED, {"controller.quorum.voters": "1@127.0.0.1:19091,1@127.0.0.1:19092"},
     "controller.quorum.voters", "twice"),
    (COMBINED, {"controller.quorum.voters": "1@:19091"}, "controller.quorum.voters", "no host"),
    (COMBINED, {"controller.quorum.voters": "1@127.0.0.1:0"}, "controller.quorum.voters",
     "1-65535"),
    (COMBINED, {"controller.quorum.voters": "2@127.0.0.1:19092"}, "controller.quorum.voters",
     "not one of 2"),
    (BROKER, {"node.id": "1"}, "controller.quorum.voters", "broker only"),
    (COMBINED, {"controller.quorum.voters": "1@127.0.0.2:19091"}, "listeners",
     "must be the same address"),
    (COMBINED, {"controller.listener.names": None}, "controller.listener.names", "required"),
    (BROKER, {"controller.listener.names": None}, "controller.listener.names", "required"),
    (COMBINED, {"controller.listener.names": "CONTROLLER,CONTROLLER"},
     "controller.listener.names", "twice"),
    (COMBINED, {"controller.listener.names": "CONTROLLER,OTHER"}, "controller.listener.names",
     "OTHER is not in listeners"),
    (CONTROLLER, {"controller.listener.names": "CTRL"}, "controller.listener.names",
     "CTRL is not in listeners"),
    (CONTROLLER, {"listeners": "CONTROLLER://127.0.0.1:19091,PLAINTEXT://127.0.0.1:19191"},
     "listeners", "controller-only"),
    (CONTROLLER, {"advertised.listeners": "PLAINTEXT://127.0.0.1:19191"},
     "advertised.listeners", "controller only"),
    (BROKER, {"listeners": "PLAINTEXT://127.0.0.1:19194,CONTROLLER://127.0.0.1:19094"},
     "listeners", "broker only"),
    (COMBINED, {"listeners": "CONTROLLER://127.0.0.1:19091"}, "listeners",
     "not a controller listener"),
    (COMBINED, {"listeners": None}, "listeners", "required"),
    (COMBINED, {"listeners": "PLAINTEXT://:19191,CONTROLLER://127.0.0.1:19091"}, "listeners",
     "no host"),
    (COMBINED, {"listeners": "PLAINTEXT//127.0.0.1:19191"}, "listeners", "NAME://host:port"),
    (COMBINED, {"listeners": "PLAINTEXT://127.0.0.1:19091,CONTROLLER://127.0.0.1:19091"},
     "listeners", "port 19091 is already"),
    (COMBINED, {"listeners": "PLAINTEXT://127.0.0.1:1,plaintext://127.0.0.1:2,"
                             "CONTROLLER://127.0.0.1:19091"}, "listeners", "twice"),
    (COMBINED, {"listeners": "PLAINTEXT://127.0.0.1:70000,CONTROLLER://127.0.0.1:19091"},
     "listeners", "0-65535"),
    (COMBINED, {"listeners": "SSL://127.0.0.1:19191,CONTROLLER://127.0.0.1:19091",
                "inter.broker.listener.name": "SSL"},
     "listener.security.protocol.map", "only PLAINTEXT"),
    (COMBINED, {"listeners": "INTERNAL://127.0.0.1:19191,CONTROLLER://127.0.0.1:19091"},
     "listener.security.protocol.map", "INTERNAL has no security protocol"),
    (COMBINED, {"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT"},
     "listener.security.protocol.map", "CONTROLLER has no security protocol"),
    (BROKER, {"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:SASL_SSL"},
     "listener.security.protocol.map", "CONTROLLER uses SASL_SSL"),
    (COMBINED, {"listener.security.protocol.map": "PLAINTEXT:TLS"},
     "listener.security.protocol.map", "unknown security protocol"),
    (COMBINED, {"inter.broker.listener.name": "CONTROLLER"}, "inter.broker.listener.name",
     "controller listener"),
    (COMBINED, {"inter.broker.listener.name": "OTHER"}, "inter.broker.listener.name",
     "not one of the broker's advertised"),
    (COMBINED, {"listeners": "CLIENT://127.0.0.1:19191,CONTROLLER://127.0.0.1:19091",
                "listener.security.protocol.map": "CLIENT:PLAINTEXT,CONTROLLER:PLAINTEXT"},
     "inter.broker.listener.name", "PLAINTEXT is not one of"),
    (COMBINED, {"security.inter.broker.protocol": "SSL"}, "security.inter.broker.protocol",
     "only PLAINTEXT"),
    (COMBINED, {"security.inter.broker.protocol": "PLAINTEXT",
                "inter.broker.listener.name": "PLAINTEXT"}, "inter.broker.listener.name",
     "only one of"),
    (COMBINED, {"advertised.listeners": "CONTROLLER://127.0.0.1:19091"}, "advertised.listeners",
     "controller listener"),
    (COMBINED, {"advertised.listeners": "OTHER://127.0.0.1:19191"}, "advertised.listeners",
     "not one of listeners"),
    (COMBINED, {"advertised.listeners": "PLAINTEXT://0.0.0.0:19191"}, "advertised.listeners",
     "routable"),
    (COMBINED, {"advertised.listeners": "PLAINTEXT://127.0.0.1:0"}, "advertised.listeners",
     "1-65535"),
    (COMBINED, {"log.dirs": None}, "log.dirs", "required"),
    (COMBINED, {"log.dirs": "/a,,/b"}, "log.dirs", "empty item"),
    (COMBINED, {"log.dirs": "/a,/a"}, "log.dirs", "twice"),
    (COMBINED, {"log.dirs": "/a\x00b"}, "log.dirs", "control character"),
    (COMBINED, {"metadata.log.dir": "/m\ud800"}, "metadata.log.dir", "lone surrogate"),
    (COMBINED, {"listeners": "PLAINTEXT://127.0.0.1:\u0661,CONTROLLER://127.0.0.1:19091"},
     "listeners", "0-65535"),
    (COMBINED, {"broker.heartbeat.interval.ms": "9000"}, "broker.heartbeat.interval.ms",
     "not less than broker.session.timeout.ms 9000"),
    (COMBINED, {"broker.session.timeout.ms": "1500"}, "broker.heartbeat.interval.ms",
     "not less than broker.session.timeout.ms 1500"),
    (COMBINED, {"broker.heartbeat.interval.ms": "0"}, "broker.heartbeat.interval.ms",
     "out of range"),
    (COMBINED, {"initial.broker.registration.timeout.ms": "1e3"},
     "initial.broker.registration.timeout.ms", "not an integer"),
    (COMBINED, {"controller.quorum.election.timeout.ms": "0"},
     "controller.quorum.election.timeout.ms", "out of range"),
    (COMBINED, {"controller.quorum.fetch.timeout.ms": "-5"}, "controller.quorum.fetch.timeout.ms",
     "out of range"),
    (COMBINED, {"controller.quorum.election.backoff.max.ms": "-1"},
     "controller.quorum.election.backoff.max.ms", "out of range"),
    (COMBINED, {"controller.quorum.request.timeout.ms": "2147483648"},
     "controller.quorum.request.timeout.ms", "out of range"),
    (COMBINED, {"controller.quorum.retry.backoff.ms": "-1"}, "controller.quorum.retry.backoff.ms",
     "out of range"),
    (COMBINED, {"num.partitions": "0"}, "num.partitions", "out of range"),
    (COMBINED, {"default.replication.factor": "40000"}, "default.replication.factor",
     "1-32767"),
    (COMBINED, {"kcontrol.admin.port": "65536"}, "kcontrol.admin.port", "0-65535"),
    (COMBINED, {"kcontrol.metrics.port": "x"}, "kcontrol.metrics.port", "not an integer"),
    (COMBINED, {"kcontrol.metadata.snapshot.every.records": "-1"},
     "kcontrol.metadata.snapshot.every.records", "out of range"),
    (COMBINED, {"kcontrol.admin.prot": "1"}, "kcontrol.admin.prot", "unknown kcontrol key"),
    (COMBINED, {"controlled.shutdown.enable": "yes"}, "controlled.shutdown.enable",
     "not a boolean"),
    (COMBINED, {"kcontrol.isr.expander.enable": "1"}, "kcontrol.isr.expander.enable",
     "not a boolean"),
    (COMBINED, {"zookeeper.connect": "127.0.0.1:2181"}, "zookeeper.connect", "does not use"),
    (COMBINED, {"control.plane.listener.name": "CONTROLLER"}, "control.plane.listener.name",
     "not supported in KRaft mode"),
]


@pytest.mark.parametrize(("base", "changes", "key", "fragment"), REFUSED,
                         ids=[f"{key}:{fragment}" for _, _, key, fragment in REFUSED])
def test_refused_naming_the_key(base: dict[str, str], changes: dict[str, str | None], key: str,
                                fragment: str) -> None:
    props = {k: v for k, v in {**base, **changes}.items() if v is not None}
    with pytest.raises(ConfigError) as info:
        settings_from_properties(props)
    assert info.value.key == key, str(info.value)
    assert fragment in info.value.message, str(info.value)
    assert str(info.value).startswith(f"{key}: ")


def test_keys_kafka_ignores_in_kraft_mode_are_warned_about_and_kept() -> None:
    warnings: list[str] = []
    s = settings_from_properties({**COMBINED, "broker.id.generation.enable": "true",
                                  "zookeeper.session.timeout.ms": "18000"}, warnings.append)
    assert warnings == ["broker.id.generation.enable: not used in KRaft mode (ignored)",
                        "zookeeper.session.timeout.ms: not used in KRaft mode (ignored)"]
    assert "broker.id.generation.enable" in s.extra


def test_overrides_win_in_order_and_a_malformed_one_is_named() -> None:
    props = apply_overrides({"a": "1"}, ["a=2", "b=x=y", "a=3"])
    assert props == {"a": "3", "b": "x=y"}
    with pytest.raises(ConfigError, match="--override: 'node.id': want key=value"):
        apply_overrides({}, ["node.id"])


def test_load_settings_reads_a_file_and_names_an_unreadable_one(tmp_path: Path) -> None:
    path = tmp_path / "node.properties"
    path.write_text("".join(f"{k}={v}\n" for k, v in COMBINED.items()))
    assert load_settings(path, ["node.id=2", "controller.quorum.voters=2@127.0.0.1:19091"]
                         ).node_id == 2
    with pytest.raises(ConfigError, match="no such file") as info:
        load_settings(tmp_path / "missing.properties")
    assert info.value.key == str(tmp_path / "missing.properties")
    path.write_bytes(b"k=\xff\n")
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_settings(path)
    path.write_text("k=\\uZZZZ\n")
    with pytest.raises(ConfigError, match="line 1: malformed"):
        load_settings(path)


def test_the_local_cluster_launchers_files_parse(tmp_path: Path) -> None:
    from adapters.cluster.kraft_launcher import NODE, KRaftCluster

    cluster = KRaftCluster(tmp_path / "k", 3, 2, backend=NODE)
    cluster.prepare()
    for n in cluster.nodes():
        warnings: list[str] = []
        s = load_settings(n.config_path, (), warnings.append)
        assert s.node_id == n.node_id and warnings == [] and s.extra == {}
        assert s.is_controller == (n.role == "controller")


@pytest.mark.parametrize(("name", "roles", "node_id"), [
    ("server", {"broker", "controller"}, 1), ("controller", {"controller"}, 1),
    ("broker", {"broker"}, 2)])
def test_the_example_files_parse(name: str, roles: set[str], node_id: int) -> None:
    path = Path(__file__).resolve().parents[3] / "config" / "kraft" / f"{name}.properties"
    warnings: list[str] = []
    s = load_settings(path, (), warnings.append)
    assert (s.process_roles, s.node_id, warnings, s.extra) == (roles, node_id, [], {})
    assert s.quorum_voters == {1: ("127.0.0.1", 9093)}
    assert all(host == "127.0.0.1" for host, _ in s.listeners.values())


KEYS = sorted({*COMBINED, "advertised.listeners", "listener.security.protocol.map",
               "inter.broker.listener.name", "metadata.log.dir", "broker.id", "log.dir",
               "controlled.shutdown.enable", "security.inter.broker.protocol",
               "broker.heartbeat.interval.ms", "kcontrol.admin.port"})
VALUE_PIECES = st.sampled_from(["", " ", ",", ":", "//", "@", "[", "]", "::1", "0", "1", "-1",
                                "19091", "99999", "127.0.0.1", "PLAINTEXT", "CONTROLLER",
                                "SSL", "broker", "controller", "/tmp/x", "\x00", "\ud800",
                                "١", "true"])


@settings_(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(KEYS),
                       st.one_of(st.text(max_size=12),
                                 st.lists(VALUE_PIECES, max_size=8).map("".join)),
                       max_size=4),
       st.sampled_from([COMBINED, BROKER, CONTROLLER]))
def test_any_mangled_file_is_settings_or_a_config_error(changes: dict[str, str],
                                                        base: dict[str, str]) -> None:
    try:
        s = settings_from_properties({**base, **changes})
    except ConfigError as exc:
        assert exc.key and exc.message
        return
    for path in (*s.log_dirs, s.metadata_log_dir):
        path.exists()  # a path the OS takes (no NUL, no lone surrogate)
    assert all(0 <= port <= 65535 for _, port in s.listeners.values())
