"""The replica directories (what each replica effect leaves on disk, what a restart finds, the
writer thread's state-change lines: one an effect, in order, after its file; a failed write
stops it) and the test entry point's command line (a bad argument named, a voter's id
refused)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from adapters.cli.log_options import LOG_FORMAT
from adapters.kraft_broker.args import parse_args
from adapters.kraft_broker.replica_dirs import ReplicaDirs
from adapters.raft_node.args import ArgumentError
from adapters.state_change_file import StateChangeFile
from fsm.kraft.broker.effects import BecomeFollower, BecomeLeader, DeleteReplica, UpdateIsr
from fsm.kraft.records.uuid import uuid_of, uuid_to_base64

T = uuid_of(9)


def _props(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines())


def test_replica_effects_on_disk_and_a_restart_finds_them(tmp_path: Path) -> None:
    dirs = ReplicaDirs(tmp_path, 1, lambda tid: "my-topic" if tid == T else None)
    dirs.apply(BecomeLeader(T, 0, 3, (1, 2)))
    dirs.apply(UpdateIsr(T, 0, 3, 7, (1,)))
    dirs.apply(BecomeFollower(T, 1, 2, 4))
    dirs.apply(BecomeFollower(uuid_of(10), 0, 2, 0))  # a name the image no longer has
    lead = _props(tmp_path / "my-topic-0" / "replica.properties")
    assert lead == {"topic.id": uuid_to_base64(T), "role": "leader", "leader": "1",
                    "leader.epoch": "3", "partition.epoch": "7", "isr": "1"}
    assert _props(tmp_path / "my-topic-1" / "replica.properties")["role"] == "follower"
    assert (tmp_path / f"{uuid_to_base64(uuid_of(10))}-0").is_dir()
    (tmp_path / "__cluster_metadata-0").mkdir()  # not a replica: left alone
    again = ReplicaDirs(tmp_path, 1, lambda tid: None)
    assert again.scan() == tuple(sorted(((T, 0), (T, 1), (uuid_of(10), 0))))
    again.apply(DeleteReplica(T, 1))
    assert not (tmp_path / "my-topic-1").exists()
    assert (tmp_path / "__cluster_metadata-0").is_dir()
    assert again.scan() == tuple(sorted(((T, 0), (uuid_of(10), 0))))


BASE = ["--node-id", "7", "--voters", "1@127.0.0.1:9093", "--listener", "127.0.0.1:0",
        "--dir", "/nonexistent/kbroker-args", "--cluster-id", "c"]


def test_the_command_line_builds_broker_settings() -> None:
    settings, cluster_id, level = parse_args([*BASE, "--heartbeat-interval-ms", "100"])
    assert cluster_id == "c" and level == "INFO"
    assert settings.is_broker and not settings.is_controller
    assert settings.listeners == {"PLAINTEXT": ("127.0.0.1", 0)}
    assert settings.broker_heartbeat_interval_ms == 100
    assert settings.metadata_log_dir == Path("/nonexistent/kbroker-args/metadata")


@pytest.mark.parametrize(("change", "named"), [
    (["--node-id", "1"], "--node-id 1 is one of --voters"),
    (["--listener", "nowhere"], "--listener"),
    (["--heartbeat-interval-ms", "0"], "--heartbeat-interval-ms"),
    (["--voters", "1@h"], "--voters"),
    (["--cluster-id", " "], "--cluster-id"),
])
def test_a_bad_argument_is_named(change: list[str], named: str) -> None:
    argv = list(BASE)
    if change[0] in argv:
        argv[argv.index(change[0]) + 1] = change[1]
    else:
        argv += change
    with pytest.raises(ArgumentError, match=named):
        parse_args(argv)


def test_the_writer_thread_leaves_the_same_files_in_the_same_order(tmp_path: Path) -> None:
    dirs = ReplicaDirs(tmp_path, 1, lambda tid: "my-topic" if tid == T else None,
                       background=True)
    try:
        dirs.apply(BecomeLeader(T, 0, 3, (1, 2)))
        dirs.apply(UpdateIsr(T, 0, 3, 7, (1,)))
        dirs.apply(BecomeFollower(T, 1, 2, 4))
        dirs.apply(BecomeFollower(T, 2, 2, 4))
        dirs.apply(DeleteReplica(T, 2))
        assert dirs.flush(10)
        lead = _props(tmp_path / "my-topic-0" / "replica.properties")
        assert lead["partition.epoch"] == "7" and lead["isr"] == "1"
        assert _props(tmp_path / "my-topic-1" / "replica.properties")["role"] == "follower"
        assert not (tmp_path / "my-topic-2").exists()
        assert set(dirs.local()) == {"my-topic-0", "my-topic-1"}
    finally:
        dirs.close()
    dirs.apply(BecomeLeader(T, 1, 5, (1,)))  # closed: written at once
    assert _props(tmp_path / "my-topic-1" / "replica.properties")["role"] == "leader"


@pytest.fixture
def state_change_log(tmp_path: Path):  # type: ignore[no-untyped-def]
    """The broker's state-change logger into its own file, as ``kcontrol node`` sets it up."""
    handler = StateChangeFile(tmp_path / "logs" / "state-change.log")
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    logger = logging.getLogger("kcontrol.broker.state.change")
    old = logger.propagate, logger.level
    logger.addHandler(handler)
    logger.propagate = False
    logger.setLevel(logging.INFO)
    yield lambda: [line.split(": ", 1)[1] for line in
                   (tmp_path / "logs" / "state-change.log").read_text().splitlines()]
    logger.removeHandler(handler)
    logger.propagate, logger.level = old
    handler.close()


def test_the_writer_logs_a_line_an_effect_in_order_once_its_file_is_written(
        tmp_path: Path, state_change_log) -> None:  # type: ignore[no-untyped-def]
    dirs = ReplicaDirs(tmp_path / "r", 1, lambda tid: "my-topic" if tid == T else None,
                       background=True)
    effects = [BecomeFollower(T, p, 2, 4) for p in range(600)]  # more than a writer round
    effects += [BecomeLeader(T, 0, 5, (1, 2)), UpdateIsr(T, 0, 5, 9, (1,)), DeleteReplica(T, 1)]
    try:
        for e in effects:
            dirs.apply(e)
        assert dirs.flush(30)
    finally:
        dirs.close()
    assert state_change_log() == [
        *(f"[broker 1] replica my-topic-{p}: follower of 2 in leader epoch 4"
          for p in range(600)),
        "[broker 1] replica my-topic-0: leader in leader epoch 5, ISR [1, 2]",
        "[broker 1] replica my-topic-0: ISR [1] (partition epoch 9)",
        "[broker 1] replica my-topic-1 deleted"]
    assert dirs.counts == {"leader": 1, "follower": 600, "isr": 1, "deleted": 1}
    assert not list((tmp_path / "r").glob("*/*.tmp")), "no temporary file left"


def test_a_failed_write_stops_the_writer_after_logging_what_was_written(
        tmp_path: Path, state_change_log) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "r"
    root.mkdir()
    (root / "my-topic-1").write_text("a file where the directory should be")
    dirs = ReplicaDirs(root, 1, lambda tid: "my-topic" if tid == T else None,
                       background=True)
    try:
        for p in range(3):
            dirs.apply(BecomeFollower(T, p, 2, 4))
        assert not dirs.flush(30), "the writer failed"
        with pytest.raises(OSError):
            dirs.apply(BecomeFollower(T, 3, 2, 4))
    finally:
        dirs.close()
    assert state_change_log() == ["[broker 1] replica my-topic-0: follower of 2 in leader epoch 4"]
    assert _props(root / "my-topic-0" / "replica.properties")["leader"] == "2"
    assert not (root / "my-topic-2").exists(), "nothing after the failed write"
