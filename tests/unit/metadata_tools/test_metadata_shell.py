"""``kcontrol metadata-shell`` over files written by the real log code: the image of a
snapshot and of a log directory (snapshot + the log after it, a torn tail left out), Kafka's
``/image`` tree, the commands and their errors, paths and globs, tab completion, and any line
of text never raising."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from metadata_sample import CLOCK_MS, INCARNATION, TOPIC_ID, records, write_log, write_snapshot

from adapters.cli import main
from adapters.metadata_tools.image_source import SourceError, load_directory, load_snapshot
from adapters.metadata_tools.repl import make_completer, run_piped
from adapters.metadata_tools.shell_commands import (
    ShellState,
    columns,
    completions,
    run_line,
    run_words,
)
from adapters.metadata_tools.shell_tree import Provenance, build_tree
from adapters.raft_log import METADATA, MetadataLog
from fsm.kraft.image import image_from_records
from fsm.kraft.records.json_form import record_to_json
from fsm.kraft.records.values import PartitionChangeRecord, RemoveTopicRecord, TopicRecord
from fsm.raft.messages import Batch

SNAPSHOT = "00000000000000000010-0000000003.checkpoint"


def shell(loaded) -> ShellState:  # type: ignore[no-untyped-def]
    return ShellState(build_tree(loaded.image, loaded.provenance, source=loaded.source,
                                 version="test"))


def out(state: ShellState, line: str, **kw: object) -> list[str]:
    return list(run_line(state, line, **kw).lines)  # type: ignore[arg-type]


def test_a_snapshot_is_kafkas_image_tree(tmp_path: Path) -> None:
    loaded = load_snapshot(write_snapshot(tmp_path))
    assert loaded.image == image_from_records(records())
    s = shell(loaded)
    assert out(s, "ls /") == ["image", "local"]
    assert out(s, "ls /image") == ["acls", "clientQuotas", "cluster", "configs",
                                   "delegationToken", "failedReplicas", "features",
                                   "provenance", "scram", "topics"]
    assert out(s, "cat /image/provenance") == [
        "offset 9, epoch 3, time 2023-11-14T22:13:20Z[UTC]"]
    assert out(s, "ls /image/topics/byName") == ["bar"]
    assert out(s, "ls /image/topics/byId") == ["GU_rXds2FGppL1JqXYpx2g"]
    assert out(s, "ls /image/topics/byName/bar") == ["0", "1", "id", "name"]
    (p0,) = out(s, "cat /image/topics/byName/bar/0")
    assert json.loads(p0) == {"partitionId": 0, "topicId": "GU_rXds2FGppL1JqXYpx2g",
                              "replicas": [1, 2], "isr": [1, 2], "removingReplicas": [],
                              "addingReplicas": [], "leader": -1, "leaderEpoch": 1,
                              "partitionEpoch": 1}  # after the PartitionChangeRecord
    assert out(s, "cat /image/topics/byId/GU_rXds2FGppL1JqXYpx2g/name") == ["bar"]
    b1, b2 = (json.loads(out(s, f"cat /image/cluster/brokers/{b}")[0]) for b in (1, 2))
    assert (b1["brokerId"], b1["brokerEpoch"], b1["fenced"]) == (1, 10, False)
    assert (b2["rack"], b2["fenced"]) == ("r2", True)
    assert out(s, "cat /image/configs/TOPIC:bar/cleanup.policy") == ["compact"]
    assert out(s, "cat /image/features/metadataVersion") == ["7"]
    assert out(s, "cat /local/version") == ["test"]


def test_a_directory_replays_the_log_after_its_latest_snapshot(tmp_path: Path) -> None:
    write_snapshot(tmp_path)
    more = [PartitionChangeRecord(1, TOPIC_ID, leader=1),
            TopicRecord("baz", INCARNATION), RemoveTopicRecord(INCARNATION)]
    with MetadataLog.open(tmp_path, serde=METADATA, clock_ms=lambda: CLOCK_MS + 1) as log:
        log.append([Batch(10, 4, tuple(more[:2])), Batch(12, 4, tuple(more[2:]))])
        log.flush()
    loaded = load_directory(tmp_path)
    assert loaded.image == image_from_records(records() + more)
    assert loaded.provenance == Provenance(12, 4, CLOCK_MS + 1)
    assert loaded.note == ""
    assert "snapshot " + SNAPSHOT in loaded.source and "3 records replayed" in loaded.source
    # the partition directory itself works too
    assert load_directory(tmp_path / "__cluster_metadata-0").image == loaded.image


def test_a_directory_without_a_snapshot_and_a_torn_tail(tmp_path: Path) -> None:
    d = write_log(tmp_path)
    assert load_directory(tmp_path).image == image_from_records(records())
    seg = d / "00000000000000000000.log"
    data = seg.read_bytes()
    seg.write_bytes(data[:-10])  # the last batch (offsets 5-9) torn
    loaded = load_directory(tmp_path)
    assert loaded.image == image_from_records(records()[:4])
    assert loaded.provenance.last_offset == 4
    assert "00000000000000000000.log: the tail from byte 423 was left out" in loaded.note
    r = CliRunner().invoke(main, ["metadata-shell", "-d", str(tmp_path), "ls",
                                  "/image/topics/byName"])
    assert r.exit_code == 0 and r.stdout == "" and "note: " in r.stderr


def test_damage_that_is_not_a_tail_is_an_error_naming_the_file(tmp_path: Path) -> None:
    snap = write_snapshot(tmp_path)
    data = bytearray(snap.read_bytes())
    data[120] ^= 0x10
    snap.write_bytes(bytes(data))
    with pytest.raises(SourceError, match=f"{SNAPSHOT}: corrupt at byte 83 "):
        load_snapshot(snap)
    r = CliRunner().invoke(main, ["metadata-shell", "--snapshot", str(snap), "ls"])
    assert r.exit_code == 1 and "error: " in r.stderr and "corrupt at byte 83" in r.stderr
    with pytest.raises(SourceError, match="named <end offset"):
        load_snapshot(snap.with_name("x.checkpoint"))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SourceError, match="no snapshot and no segment"):
        load_directory(empty)
    with pytest.raises(SourceError, match="no such directory"):
        load_directory(tmp_path / "missing")


def test_a_log_that_starts_after_its_snapshot_is_missing_records(tmp_path: Path) -> None:
    d = write_log(tmp_path)
    (d / "00000000000000000000.log").rename(d / "00000000000000000003.log")
    with pytest.raises(SourceError, match="starts at offset 3, after offset 0"):
        load_directory(tmp_path)


def _sample_state(tmp_path: Path) -> ShellState:
    return shell(load_snapshot(write_snapshot(tmp_path)))


def test_paths_dots_globs_and_cd(tmp_path: Path) -> None:
    s = _sample_state(tmp_path)
    assert out(s, "cd /image//topics/byName/") == [] and out(s, "pwd") == [
        "/image/topics/byName"]
    assert out(s, "ls bar/../bar/./") == ["0", "1", "id", "name"]
    assert out(s, "cat ../byId/*/name") == ["bar"]
    # two directories (failedReplicas is empty: like Kafka, nothing of it is printed)
    assert out(s, "ls /image/f*") == ["", "features:", "metadataVersion"]
    assert out(s, "cd ..") == [] and out(s, "pwd") == ["/image/topics"]
    assert out(s, "cd") == [] and out(s, "pwd") == ["/"]
    assert out(s, "cd /image/provenance") == ["cd: /image/provenance: not a directory."]
    assert out(s, "cd nope") == ["cd: nope: no such directory."]
    assert out(s, "cd /../../image") == [] and out(s, "pwd") == ["/image"]


def test_ls_of_several_targets_files_and_columns(tmp_path: Path) -> None:
    s = _sample_state(tmp_path)
    assert out(s, "ls /image/provenance /image/topics /image/cluster") == [
        "provenance", "", "topics:", "byId", "byName", "", "cluster:", "brokers",
        "controllers"]
    assert out(s, "ls /image/topics /nope") == ["ls: /nope: no such file or directory.",
                                                "byId", "byName"]
    # the most columns that fit (filled down, then across), two spaces past the longest
    assert out(s, "ls /image", width=80) == [
        "acls          cluster  delegationToken  features    scram",
        "clientQuotas  configs  failedReplicas   provenance  topics"]
    assert out(s, "ls /image", width=30) == out(s, "ls /image")  # two columns are 33 wide
    assert columns(["a", "bb"], None) == ["a", "bb"]
    assert columns(["a", "bb"], 80) == ["a  bb"]


def test_cat_tree_find_history_man_help_exit(tmp_path: Path) -> None:
    s = _sample_state(tmp_path)
    assert out(s, "cat /image/topics") == ["cat: /image/topics: Is a directory"]
    assert out(s, "cat /x") == ["cat: /x: No such file or directory."]
    assert run_line(s, "cat /x").failed and not run_line(s, "cat /local/version").failed
    tree = out(s, "tree /image/topics/byName")
    assert tree[:3] == ["bar:", "  0:", '    {"partitionId":0,"topicId":"GU_rXds2FGppL1JqXYpx2g"'
                        ',"replicas":[1,2],"isr":[1,2],"removingReplicas":[],"addingReplicas"'
                        ':[],"leader":-1,"leaderEpoch":1,"partitionEpoch":1}']
    assert tree[-2:] == ["  name:", "    bar"]
    assert out(s, "tree /image/provenance") == [
        "offset 9, epoch 3, time 2023-11-14T22:13:20Z[UTC]"]
    assert out(s, "find /image/cluster") == ["/image/cluster", "/image/cluster/brokers",
                                             "/image/cluster/brokers/1",
                                             "/image/cluster/brokers/2",
                                             "/image/cluster/controllers"]
    s2 = _sample_state(tmp_path / "2")
    run_line(s2, "cd /image")
    run_line(s2, "  ")  # blank lines are not history
    assert out(s2, "find features") == ["features", "features/metadataVersion"]
    assert out(s2, "history") == ["    1  cd /image", "    2  find features", "    3  history"]
    assert out(s2, "history 1") == ["    4  history 1"]
    assert out(s2, "man ls") == ["usage: ls [PATH...]", "", "List metadata nodes."]
    assert any(line.split() == ["tree", "PATH...", "Show", "the", "contents", "of",
                                "metadata", "nodes", "in", "a", "tree", "structure."]
               for line in out(s2, "help"))
    assert run_line(s2, "exit").exit and not run_line(s2, "pwd").exit
    for line, words in (("frob", "frob: unknown command"), ("pwd x", "takes no arguments"),
                        ("cat", "at least one PATH"), ("ls 'open", "error: No closing"),
                        ("history x", "want history [N]"), ("man frob", "want man COMMAND")):
        r = run_line(s2, line)
        assert r.failed and words in r.lines[0], (line, r)


def test_completion_of_commands_and_paths(tmp_path: Path) -> None:
    s = _sample_state(tmp_path)
    assert completions(s, "") == sorted(["cat", "cd", "exit", "find", "help", "history",
                                         "ls", "man", "pwd", "tree"])
    assert completions(s, "c") == ["cat", "cd"]
    assert completions(s, "ls /im") == ["/image/"]
    assert completions(s, "ls /image/topics/byName/") == ["/image/topics/byName/bar/"]
    assert completions(s, "cat /image/prov") == ["/image/provenance"]
    assert completions(s, "cat /image/f") == ["/image/failedReplicas/", "/image/features/"]
    assert completions(s, "ls /nope/x") == []
    run_line(s, "cd /image/topics")
    assert completions(s, "ls by") == ["byId/", "byName/"]
    assert completions(s, "tree byName/bar/") == ["byName/bar/0", "byName/bar/1",
                                                  "byName/bar/id", "byName/bar/name"]
    # the readline completer: candidate n for the word at the cursor, None past the last
    buffer = "ls /image/topics/by"
    complete = make_completer(s, lambda: buffer + " trailing", lambda: len(buffer))
    assert [complete("/image/topics/by", n) for n in range(3)] == [
        "/image/topics/byId/", "/image/topics/byName/", None]


def test_one_shot_piped_and_usage(tmp_path: Path) -> None:
    snap = write_snapshot(tmp_path)
    r = CliRunner().invoke(main, ["metadata-shell", "--snapshot", str(snap), "cat",
                                  "/image/topics/byName/bar/1"])
    assert r.exit_code == 0
    assert json.loads(r.stdout) == record_to_json(records()[6])["data"]
    r = CliRunner().invoke(main, ["metadata-shell", "--snapshot", str(snap), "ls", "/x"])
    assert r.exit_code == 1 and r.stdout == "ls: /x: no such file or directory.\n"
    # everything after the command is the command's, even what looks like an option
    r = CliRunner().invoke(main, ["metadata-shell", "-s", str(snap), "ls", "-l"])
    assert r.exit_code == 1 and r.stdout == "ls: -l: no such file or directory.\n"
    r = CliRunner().invoke(main, ["metadata-shell", "-s", str(snap)],
                           input="cd /image/cluster/brokers\nls\nexit\nls /\n")
    assert r.exit_code == 0 and r.stdout == "1\n2\n"  # nothing after exit
    for args, words in ([[], "got 0: none"], [["-s", str(snap), "-d", str(tmp_path)],
                                              "got 2: --snapshot, --directory"]):
        r = CliRunner().invoke(main, ["metadata-shell", *args])
        assert r.exit_code == 2 and words in r.output
    assert run_words(ShellState(build_tree(image_from_records([]), Provenance(),
                                           source="", version="")), []).lines == ()


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("lscdatrefinpwhoy /.*?[]'\"\\-0123456789ab")),
               max_size=40))
def test_any_line_is_an_answer_never_an_exception(tmp_path_factory: pytest.TempPathFactory,
                                                  line: str) -> None:
    state = _STATE.get("s") or _STATE.setdefault(
        "s", _sample_state(tmp_path_factory.mktemp("shell")))
    result = run_line(state, line)
    assert all(isinstance(x, str) for x in result.lines)
    completions(state, line)


_STATE: dict[str, ShellState] = {}


def test_run_piped_reports_failure(tmp_path: Path) -> None:
    import io

    s = _sample_state(tmp_path)
    sink = io.StringIO()
    assert run_piped(s, io.StringIO("ls /image/topics\n"), sink) is True
    assert run_piped(s, io.StringIO("cat /nope\npwd\n"), sink) is False
    assert sink.getvalue().endswith("cat: /nope: No such file or directory.\n/\n")


def test_the_interactive_loop_prompts_runs_and_leaves(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import os

    from adapters.metadata_tools import repl

    typed = iter(["cd /image/topics", "ls", "exit", "never read"])
    prompts: list[str] = []

    def fake_input(prompt: str) -> str:
        prompts.append(prompt)
        return next(typed)

    monkeypatch.setattr("builtins.input", fake_input)
    monkeypatch.setattr(repl.shutil, "get_terminal_size", lambda: os.terminal_size((80, 24)))
    sink = io.StringIO()
    repl.run_interactive(_sample_state(tmp_path), sink)
    assert prompts == [">> "] * 3
    assert sink.getvalue().splitlines()[1:] == ["byId  byName"]  # columns on a terminal

    def eof(prompt: str) -> str:
        raise EOFError

    monkeypatch.setattr("builtins.input", eof)
    sink = io.StringIO()
    repl.run_interactive(_sample_state(tmp_path / "2"), sink)  # Ctrl-D leaves
    assert sink.getvalue().startswith(repl.BANNER)
