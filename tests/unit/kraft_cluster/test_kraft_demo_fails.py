"""The KRaft demo fails loudly: a wait that does not happen names what it waited for, a
node that exits on its own is reported with its log, and a failed step makes the demo exit 1
with the reason (and still stop the cluster)."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console

from adapters.cluster import kraft_demo
from adapters.cluster.demo import DemoError
from adapters.cluster.kraft_demo import KRaftDemo, run_kraft_demo
from adapters.cluster.kraft_launcher import KRaftClusterError


class _Cluster:
    def __init__(self, exited: bool = False) -> None:
        self.exited = exited
        self.stopped = False

    def check_alive(self) -> None:
        if self.exited:
            raise KRaftClusterError("broker-2 exited with status 1; the end of its log: boom")

    def stop(self) -> list[str]:
        self.stopped = True
        return ["broker-1 (pid 1): stopped"]


def _demo(tmp_path: Path, cluster: _Cluster) -> tuple[KRaftDemo, Console]:
    console = Console(record=True, width=200)
    demo = KRaftDemo(tmp_path, console)
    demo.cluster = cluster  # type: ignore[assignment]
    return demo, console


def test_a_wait_that_does_not_happen_names_what_it_waited_for(tmp_path: Path) -> None:
    demo, _ = _demo(tmp_path, _Cluster())
    with pytest.raises(DemoError, match="waiting for a new leader"):
        demo.wait("a new leader", lambda: None, timeout=0.1)


def test_a_node_that_exits_fails_the_wait_with_its_log(tmp_path: Path) -> None:
    demo, _ = _demo(tmp_path, _Cluster(exited=True))
    with pytest.raises(DemoError, match="broker-2 exited .*boom"):
        demo.wait("anything", lambda: None, timeout=5)


def test_a_failed_step_exits_1_with_the_reason_and_stops_the_cluster(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = _Cluster()

    def run(self: KRaftDemo) -> None:
        self.cluster = cluster  # type: ignore[assignment]
        raise DemoError("no new leader: 3000 -> 3000")

    monkeypatch.setattr(kraft_demo.KRaftDemo, "run", run)
    console = Console(record=True, width=200)
    assert run_kraft_demo(tmp_path, console) == 1
    text = console.export_text()
    assert "KRaft demo failed: no new leader: 3000 -> 3000" in text
    assert cluster.stopped and "broker-1 (pid 1): stopped" in text
    assert "finished" not in text
