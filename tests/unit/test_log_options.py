"""``--log-config FILE`` on the long-running commands: a file that cannot be used is a usage
error (exit code 2) naming the file and the problem, without a traceback; and the default
setup's state-change file handler, which creates its directory when it first writes."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest

from adapters.cli.log_options import (
    STATE_CHANGE_FILE,
    STATE_CHANGE_LOGGERS,
    LogConfigError,
    configure_logging,
    read_log_config,
)

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = {
    "controller": ["controller", "--broker-id", "1", "--zookeeper", "127.0.0.1:1",
                   "--connect-timeout", "0.1"],
    "broker": ["broker", "--id", "1", "--zookeeper", "127.0.0.1:1", "--listeners",
               "PLAINTEXT://127.0.0.1:0", "--connect-timeout", "0.1"],
    "cluster up": ["cluster", "up", "--zookeeper", "127.0.0.1:1"],
    "cluster demo": ["cluster", "demo"],
    "chaos": ["chaos", "--faults", "1"],
}
BAD_FILES = {
    "not JSON": ("{version: 1", "not valid JSON"),
    "not an object": ("[1, 2]", "holds a JSON list, not an object"),
    "refused": ('{"version": 1, "handlers": {"h": {"class": "no.such.Handler"}}, '
                '"root": {"handlers": ["h"]}}', "logging.config.dictConfig refused it"),
}


def _kcontrol(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "adapters.cli", *args], cwd=tmp_path,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("problem", sorted(BAD_FILES))
@pytest.mark.parametrize("command", ["controller", "broker"])
def test_a_bad_log_config_is_a_usage_error(tmp_path: Path, command: str, problem: str) -> None:
    text, message = BAD_FILES[problem]
    path = tmp_path / "logging.json"
    path.write_text(text)
    r = _kcontrol([*COMMANDS[command], "--log-config", str(path)], tmp_path)
    assert r.returncode == 2, r.stderr
    assert "--log-config" in r.stderr and str(path) in r.stderr and message in r.stderr
    assert "Traceback" not in r.stderr
    assert not (tmp_path / ".kcontrol").exists()  # nothing started, nothing written


@pytest.mark.parametrize("command", ["cluster up", "cluster demo", "chaos"])
def test_the_cluster_commands_check_the_file_before_starting(tmp_path: Path,
                                                              command: str) -> None:
    missing = tmp_path / "missing.json"
    r = _kcontrol([*COMMANDS[command], "--log-config", str(missing)], tmp_path)
    assert r.returncode == 2 and f"{missing}: cannot be read" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
    assert not (tmp_path / ".kcontrol").exists()


def test_read_log_config_returns_the_dictionary(tmp_path: Path) -> None:
    path = tmp_path / "ok.json"
    path.write_text('{"version": 1, "root": {"level": "INFO"}}')
    assert read_log_config(path) == {"version": 1, "root": {"level": "INFO"}}
    with pytest.raises(LogConfigError, match="cannot be read"):
        read_log_config(tmp_path / "nope.json")


def test_the_default_setup_writes_state_changes_to_their_own_file(tmp_path: Path) -> None:
    log_dir = tmp_path / "logs"
    setup = configure_logging("INFO", log_dir, None)
    try:
        assert not log_dir.exists()  # created with the first line
        for name in STATE_CHANGE_LOGGERS:
            logging.getLogger(name).info("%s moved", name)
            assert not logging.getLogger(name).propagate
    finally:
        setup.close()
    lines = (log_dir / STATE_CHANGE_FILE).read_text().splitlines()
    assert [line.split(" ", 3)[3] for line in lines] == [
        f"{name}: {name} moved" for name in STATE_CHANGE_LOGGERS]
    assert all(logging.getLogger(n).propagate and not logging.getLogger(n).handlers
               for n in STATE_CHANGE_LOGGERS)


BAD_BOUNDS = {
    "size zero": (["--state-change-log-max-bytes", "0"], "from 1024"),
    "not a size": (["--state-change-log-max-bytes", "lots"], "is not a size"),
    "one file": (["--state-change-log-files", "1"], "from 2"),
}


@pytest.mark.parametrize("problem", sorted(BAD_BOUNDS))
@pytest.mark.parametrize("command", ["controller", "broker", "node"])
def test_a_bad_state_change_log_bound_is_a_usage_error(tmp_path: Path, command: str,
                                                       problem: str) -> None:
    flags, message = BAD_BOUNDS[problem]
    args = COMMANDS.get(command, ["node", "--override", "node.id=1"])
    r = _kcontrol([*args, *flags], tmp_path)
    assert r.returncode == 2, r.stderr
    assert flags[0] in r.stderr and message in r.stderr
    assert "Traceback" not in r.stderr
    assert not (tmp_path / ".kcontrol").exists()  # nothing started, nothing written


def test_the_default_setup_bounds_the_state_change_file(tmp_path: Path) -> None:
    log_dir = tmp_path / "logs"
    setup = configure_logging("INFO", log_dir, None, max_bytes=1024, files=2)
    try:
        for i in range(500):
            logging.getLogger(STATE_CHANGE_LOGGERS[0]).info("partition %d moved", i)
    finally:
        setup.close()
    assert sorted(p.name for p in log_dir.iterdir()) == [STATE_CHANGE_FILE,
                                                          f"{STATE_CHANGE_FILE}.1"]
    assert all(p.stat().st_size < 1024 for p in log_dir.iterdir())
    assert (log_dir / STATE_CHANGE_FILE).read_text().splitlines()[-1].endswith(
        "partition 499 moved")
