"""Every ``kcontrol`` command's help: each option's help a full sentence, each command's short
help whole in its group's listing (click cuts a long first sentence with "..."), one meaning
for ``--zookeeper`` (``$KCONTROL_ZOOKEEPER``) and ``--json FILE`` everywhere, and usage errors
that exit 2 with a clear message."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from adapters.cli import main
from adapters.cli.zk_options import ZOOKEEPER_ENV
from model_check.json_option import HELP as JSON_HELP


def commands(group: click.Group = main, path: tuple[str, ...] = ("kcontrol",)
             ) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    for name, command in sorted(group.commands.items()):
        yield (*path, name), command
        if isinstance(command, click.Group):
            yield from commands(command, (*path, name))


def options(command: click.Command) -> Iterator[click.Option]:
    for param in command.params:
        if isinstance(param, click.Option) and not param.hidden:
            yield param


def is_sentence(text: str | None) -> bool:
    return bool(text) and text[0].isupper() and text.rstrip().endswith(".")  # type: ignore[index]


def test_every_option_help_is_a_full_sentence() -> None:
    bad = [
        f"{' '.join(path)} {opt.opts[0]}: {opt.help!r}"
        for path, command in commands()
        for opt in options(command)
        if not is_sentence(opt.help)
    ]
    assert bad == []


def test_every_command_has_whole_sentences_in_help_and_listing() -> None:
    bad = []
    groups = [("kcontrol",)] + [p for p, c in commands() if isinstance(c, click.Group)]
    for path in groups:
        r = CliRunner().invoke(main, [*path[1:], "--help"], terminal_width=80)
        assert r.exit_code == 0, r.output
        listing = r.output.split("Commands:\n", 1)[1] if "Commands:\n" in r.output else ""
        for line in listing.splitlines():
            if line.strip() and ("..." in line or not line.rstrip().endswith(".")):
                bad.append(f"{' '.join(path)}: {line.strip()}")
    for path, command in commands():
        if not is_sentence((command.help or "").split("\n\n")[0]):
            bad.append(f"{' '.join(path)}: help {command.help!r}")
    assert bad == []


def test_zookeeper_is_one_option_with_one_variable() -> None:
    seen = []
    for path, command in commands():
        for opt in options(command):
            if "--zookeeper" not in opt.opts:
                continue
            seen.append(path[-1])
            assert opt.metavar == "HOSTS", path
            if opt.required or opt.envvar is not None:  # audit's: required unless --kraft
                assert opt.envvar == ZOOKEEPER_ENV and f"${ZOOKEEPER_ENV}" in (opt.help or ""), path
            else:
                assert opt.envvar is None, path
                assert f"${ZOOKEEPER_ENV} is not read here." in (opt.help or ""), path
    assert {"reassign", "describe", "audit", "controller", "broker", "up", "chaos"} <= set(seen)


def test_json_means_the_same_everywhere() -> None:
    seen = []
    for path, command in commands():
        for opt in options(command):
            if "--json" not in opt.opts:
                continue
            seen.append(path[-1])
            assert opt.metavar == "FILE" and opt.flag_value == "-", path
            prefix, suffix = JSON_HELP.split("{what}")
            assert opt.help and opt.help.startswith(prefix) and opt.help.endswith(suffix), path
    assert sorted(seen) == ["audit", "chaos", "check", "describe", "dump-log", "status"]


@pytest.mark.parametrize(("args", "message"), [
    (["reassign", "--execute", "--verify"], "exactly one action"),
    (["reassign"], "exactly one action"),
    (["reassign", "--execute"], "--execute needs --reassignment-json-file"),
    (["reassign", "--generate", "--broker-list", "1,2"], "both --topics-to-move-json-file"),
    (["reassign", "--status", "--broker-list", "1"], "go with --generate"),
    (["reassign", "--generate", "--broker-list", "1,1"], "duplicate entries: 1"),
    (["reassign", "--generate", "--broker-list", "1,x"], "'x', which is not a broker id"),
    (["reassign", "--verify", "--reassignment-json-file", "/nonexistent.json"], "does not exist"),
    (["topics", "describe", "--verbose=yes"], "--verbose"),
    (["topics", "--list", "--delete"], "exactly one action"),
    (["topics", "--alter", "--topic", "t"], "Missing option '--partitions'"),
    (["audit", "--json", "/"], "directory"),
])
def test_usage_errors_exit_2_with_a_clear_message(args: list[str], message: str) -> None:
    r = CliRunner().invoke(main, args, env={ZOOKEEPER_ENV: "127.0.0.1:1"})
    assert r.exit_code == 2, r.output
    assert message in r.stderr


def test_zookeeper_comes_from_the_environment_or_is_required() -> None:
    r = CliRunner().invoke(main, ["reassign", "--status"], env={ZOOKEEPER_ENV: None})
    assert r.exit_code == 2 and "Missing option '--zookeeper'" in r.stderr


def test_json_dash_writes_only_json_to_stdout(tmp_path: Path) -> None:
    r = CliRunner().invoke(main, ["check", "smoke", "--json", "-"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["verdict"] == "pass"
    assert "verdict: pass" in r.stderr
    out = tmp_path / "smoke.json"
    r = CliRunner().invoke(main, ["check", "smoke", "--json", str(out)])
    assert r.exit_code == 0 and "verdict: pass" in r.stdout
    assert json.loads(out.read_text())["verdict"] == "pass"


def test_topics_takes_kafka_topics_action_flags() -> None:
    r = CliRunner().invoke(main, ["topics", "--describe", "--help"])
    assert r.exit_code == 0 and "exactly as kafka-topics.sh --describe does" in r.output
    r = CliRunner().invoke(main, ["topics", "--alter", "--help"])
    assert r.exit_code == 0 and "topics add-partitions [OPTIONS]" in r.output
