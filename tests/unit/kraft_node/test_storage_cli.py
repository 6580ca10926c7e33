"""``kcontrol storage format|info|random-uuid`` and ``kcontrol node`` through click's
``CliRunner``: what they print, what they write, their exit codes."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from adapters.cli import main
from adapters.kraft_node.meta_properties import MetaProperties, check_cluster_id, read_meta
from tests.unit.kraft_node.test_properties import COMBINED

CLUSTER = "MkU3OEVBNTcwNTJENDM2Qg"
OTHER = "3Db5QLSqSZieL3rJBUUegA"


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "node.properties"
    props = {**COMBINED, "log.dirs": f"{tmp_path}/a,{tmp_path}/b",
             "metadata.log.dir": f"{tmp_path}/meta"}
    path.write_text("# a node\n" + "".join(f"{k}={v}\n" for k, v in props.items()))
    return path


def run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(main, list(args))


def test_random_uuid_prints_a_cluster_id() -> None:
    r = run("storage", "random-uuid")
    assert r.exit_code == 0
    assert check_cluster_id(r.output.strip()) == r.output.strip()


def test_format_writes_every_directory_then_refuses_again(config: Path) -> None:
    d = config.parent
    r = run("storage", "format", "--config", str(config), "--cluster-id", CLUSTER)
    assert r.exit_code == 0, r.output
    assert r.output.splitlines() == [
        f"Formatting {d}/{x} (cluster.id={CLUSTER}, node.id=1)" for x in ("a", "b", "meta")]
    for x in ("a", "b", "meta"):
        assert read_meta(d / x) == MetaProperties(CLUSTER, 1)
        assert sorted(p.name for p in (d / x).iterdir()) == ["meta.properties"]
    r = run("storage", "format", "-c", str(config), "-t", CLUSTER)
    assert r.exit_code == 1
    assert f"kcontrol storage format: error: {d}/a: already formatted" in r.output
    assert "--ignore-formatted" in r.output


def test_ignore_formatted_formats_the_rest_but_not_another_cluster_or_node(config: Path) -> None:
    d = config.parent
    assert run("storage", "format", "-c", str(config), "-t", CLUSTER,
               "--override", f"log.dirs={d}/a").exit_code == 0
    r = run("storage", "format", "-c", str(config), "-t", CLUSTER, "--ignore-formatted")
    assert r.exit_code == 0, r.output
    assert r.output.splitlines() == [
        f"Skipping {d}/a: already formatted (cluster.id={CLUSTER}, node.id=1)",
        f"Formatting {d}/b (cluster.id={CLUSTER}, node.id=1)",
        f"Skipping {d}/meta: already formatted (cluster.id={CLUSTER}, node.id=1)"]
    r = run("storage", "format", "-c", str(config), "-t", OTHER, "-g")
    assert r.exit_code == 1
    assert f"{d}/a: formatted for cluster.id {CLUSTER}, not {OTHER}" in r.output
    r = run("storage", "format", "-c", str(config), "-t", CLUSTER, "-g", "--override",
            "node.id=2", "--override", "controller.quorum.voters=2@127.0.0.1:19091")
    assert r.exit_code == 1
    assert f"{d}/a: formatted for node.id 1, not 2" in r.output


def test_a_refused_format_writes_nothing(config: Path) -> None:
    d = config.parent
    (d / "meta").mkdir()
    (d / "meta" / "meta.properties").write_text(f"version=1\ncluster.id={OTHER}\nnode.id=1\n")
    r = run("storage", "format", "-c", str(config), "-t", CLUSTER, "-g")
    assert r.exit_code == 1
    assert not (d / "a").exists() and not (d / "b").exists()


def test_format_refuses_bad_arguments_with_exit_2(config: Path) -> None:
    r = run("storage", "format", "-c", str(config), "-t", "my-cluster")
    assert r.exit_code == 2
    assert "kcontrol storage format: error: --cluster-id: 'my-cluster' is not a cluster id" \
        in r.output
    r = run("storage", "format", "-c", str(config), "-t", CLUSTER, "--override", "node.id=x")
    assert r.exit_code == 2
    assert "kcontrol storage format: error: node.id: 'x' is not an integer" in r.output
    r = run("storage", "format", "-c", str(config.parent / "nope"), "-t", CLUSTER)
    assert r.exit_code == 2 and "no such file" in r.output
    assert not (config.parent / "a").exists()


def test_format_names_a_directory_it_cannot_create(config: Path) -> None:
    (config.parent / "a").write_text("a file")
    r = run("storage", "format", "-c", str(config), "-t", CLUSTER)
    assert r.exit_code == 1 and f"{config.parent}/a: exists and is not a directory" in r.output


def test_info_flags_problems_and_exits_1(config: Path) -> None:
    d = config.parent
    r = run("storage", "info", "-c", str(config))
    assert r.exit_code == 1
    assert r.output.splitlines() == [
        f"{d}/a (log.dirs): PROBLEM: does not exist (not formatted)",
        f"{d}/b (log.dirs): PROBLEM: does not exist (not formatted)",
        f"{d}/meta (metadata.log.dir): PROBLEM: does not exist (not formatted)",
        "3 problem(s) found."]
    assert run("storage", "format", "-c", str(config), "-t", CLUSTER).exit_code == 0
    r = run("storage", "info", "-c", str(config))
    assert r.exit_code == 0, r.output
    assert r.output.splitlines()[0] == (f"{d}/a (log.dirs): meta.properties version 1, "
                                        f"cluster.id={CLUSTER}, node.id=1")
    assert r.output.splitlines()[-1] == f"OK: 3 directories formatted (cluster.id={CLUSTER}, node.id=1)."
    (d / "b" / "meta.properties").write_text(f"version=1\ncluster.id={OTHER}\nnode.id=1\n")
    (d / "meta" / "meta.properties").write_text("version=0\nbroker.id=1\n")
    r = run("storage", "info", "-c", str(config))
    assert r.exit_code == 1
    assert f"{d}/b (log.dirs): PROBLEM: cluster.id {OTHER} differs from {d}/a's {CLUSTER}" \
        in r.output
    assert f"{d}/meta (metadata.log.dir): PROBLEM: {d}/meta/meta.properties: version 0" \
        in r.output
    assert r.output.splitlines()[-1] == "2 problem(s) found."


def test_info_flags_another_node(config: Path) -> None:
    assert run("storage", "format", "-c", str(config), "-t", CLUSTER).exit_code == 0
    r = run("storage", "info", "-c", str(config), "--override", "node.id=2",
            "--override", "controller.quorum.voters=2@127.0.0.1:19091")
    assert r.exit_code == 1
    assert "PROBLEM: node.id 1 is not the configured node.id 2" in r.output


def test_node_refuses_a_bad_key_with_exit_2(config: Path) -> None:
    r = run("node", "--config", str(config), "--override", "process.roles=broker,ctrl")
    assert r.exit_code == 2
    assert r.output.strip() == ("kcontrol node: error: process.roles: unknown role 'ctrl' "
                                "(want broker, controller or both)")


def test_node_refuses_unformatted_storage_with_exit_1(config: Path) -> None:
    r = run("node", "--config", str(config), "--log-dir", str(config.parent / "logs"))
    assert r.exit_code == 1
    assert f"kcontrol node: {config.parent}/a: does not exist" in r.output
    assert f"kcontrol storage format --config {config}" in r.output


def test_node_hands_the_settings_and_cluster_id_to_the_runtime(
        config: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert run("storage", "format", "-c", str(config), "-t", CLUSTER).exit_code == 0
    calls = []
    fake = type(sys)("adapters.kraft_node.runtime")
    fake.run_node = lambda settings, cluster_id: calls.append((settings, cluster_id)) or 3  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "adapters.kraft_node.runtime", fake)
    r = run("node", "-c", str(config), "--override", "num.partitions=5",
            "--log-dir", str(config.parent / "logs"))
    assert r.exit_code == 3, r.output
    [(settings, cluster_id)] = calls
    assert cluster_id == CLUSTER and settings.node_id == 1 and settings.num_partitions == 5


def test_node_without_a_runtime_says_so(config: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert run("storage", "format", "-c", str(config), "-t", CLUSTER).exit_code == 0
    monkeypatch.setitem(sys.modules, "adapters.kraft_node.runtime", None)  # import fails
    r = run("node", "-c", str(config), "--log-dir", str(config.parent / "logs"))
    assert r.exit_code == 1
    assert "kcontrol node: the node runtime is not built yet" in r.output


def test_flags_alone_configure_format_and_node(tmp_path: Path) -> None:
    props = {**COMBINED, "log.dirs": f"{tmp_path}/a", "metadata.log.dir": f"{tmp_path}/a"}
    flags = [x for k, v in props.items() for x in ("--override", f"{k}={v}")]
    r = run("node", *flags)
    assert r.exit_code == 1
    # the hint repeats the flags: the storage tool takes them the same way
    assert "run kcontrol storage format --override process.roles=broker,controller" in r.output
    r = run("storage", "format", *flags, "--cluster-id", CLUSTER)
    assert r.exit_code == 0, r.output
    assert read_meta(tmp_path / "a") == MetaProperties(CLUSTER, 1)
    r = run("storage", "info", *flags)
    assert r.exit_code == 0 and f"cluster.id={CLUSTER}" in r.output


def test_neither_a_file_nor_flags_is_refused() -> None:
    r = run("node")
    assert r.exit_code == 2 and "--config FILE, or the configuration as --override" in r.output
    r = run("storage", "info")
    assert r.exit_code == 2 and "--config FILE, or the configuration as --override" in r.output
