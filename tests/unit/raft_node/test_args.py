"""The node's command line: what it accepts, and an error naming each bad argument."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapters.raft_node.args import ArgumentError, parse_args, parse_voters
from adapters.raft_node.process import EXIT_BAD_ARGUMENT, main

VOTERS = "1@127.0.0.1:9091,2@127.0.0.1:9092,3@localhost:9093"


def test_a_good_command_line(tmp_path: Path) -> None:
    a = parse_args(["--node-id", "2", "--voters", VOTERS, "--dir", str(tmp_path),
                    "--controller", "--election-timeout-ms", "300"])
    assert a.node_id == 2 and a.controller and a.election_timeout_ms == 300
    assert a.voters == {1: ("127.0.0.1", 9091), 2: ("127.0.0.1", 9092), 3: ("localhost", 9093)}
    assert a.address == ("127.0.0.1", 9092)
    assert a.directory == tmp_path


@pytest.mark.parametrize(("text", "message"), [
    ("", "empty"),
    ("1@127.0.0.1", "want id@host:port"),
    ("1127.0.0.1:9", "want id@host:port"),
    ("a@127.0.0.1:9", "integers"),
    ("1@127.0.0.1:0", "out of 1-65535"),
    ("-1@127.0.0.1:9", "not negative"),
    ("1@h:9,1@h:10", "node 1 twice"),
])
def test_bad_voters(text: str, message: str) -> None:
    with pytest.raises(ArgumentError, match=message):
        parse_voters(text)


@pytest.mark.parametrize(("argv", "message"), [
    (["--node-id", "4", "--voters", VOTERS], "not one of --voters"),
    (["--node-id", "one", "--voters", VOTERS], "not an integer"),
    (["--node-id", "1", "--voters", VOTERS, "--admin-port", "70000"], "out of 0-65535"),
    (["--node-id", "1", "--voters", VOTERS, "--flush-every", "0"], "flush-every 0"),
])
def test_bad_arguments_name_themselves(tmp_path: Path, argv: list[str], message: str) -> None:
    with pytest.raises(ArgumentError, match=message):
        parse_args([*argv, "--dir", str(tmp_path)])


def test_a_file_as_the_log_directory_is_refused(tmp_path: Path) -> None:
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(ArgumentError, match="not a directory"):
        parse_args(["--node-id", "1", "--voters", VOTERS, "--dir", str(f)])


def test_the_process_exits_2_with_one_line(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--node-id", "9", "--voters", VOTERS, "--dir", str(tmp_path)]) \
        == EXIT_BAD_ARGUMENT
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--node-id 9 is not one of --voters" in err
