"""What a KRaft node's start imports: ``python -m adapters.cli node ...`` in a fresh interpreter,
its command line parsed, its configuration and storage checked and the real runtime module
imported, up to the moment ``run_node`` would start the node's parts (there the child prints
``sys.modules`` instead). The command line imports sub-commands lazily
(``adapters.cli.lazy_commands``): neither the model checker nor Spark nor the ZooKeeper side may
load; a controller does not load the ZooKeeper-mode broker either (``adapters.network``'s names
are imported on first use)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from adapters.cli import main
from tests.unit.kraft_node.test_properties import COMBINED, CONTROLLER

ROOT = Path(__file__).resolve().parents[3]
CLUSTER = "MkU3OEVBNTcwNTJENDM2Qg"

#: Never in a KRaft node: the checker, the heavy extras, the ZooKeeper client and side.
NEVER = ("model_check", "pyspark", "hypothesis", "transitions", "graphviz", "networkx",
         "kazoo", "adapters.zookeeper", "adapters.controller", "adapters.broker")

#: The child: the node command as ``python -m adapters.cli`` runs it, with ``run_node`` (once
#: the real runtime module is imported) replaced by a print of what is loaded.
CHILD = """
import sys
import adapters.kraft_node.runtime as runtime

def report(settings, cluster_id):
    if settings.is_broker:  # what run_node imports for the broker role
        import adapters.kraft_broker
    print("@@modules", " ".join(sorted(sys.modules)))
    return 0

runtime.run_node = report
sys.argv = ["kcontrol", *sys.argv[1:]]
from adapters.cli import main
main()
"""


def node_start_modules(tmp_path: Path, props: dict[str, str]) -> set[str]:
    props = {**props, "log.dirs": f"{tmp_path}/data", "metadata.log.dir": f"{tmp_path}/data"}
    flags = [x for k, v in props.items() for x in ("--override", f"{k}={v}")]
    r = CliRunner().invoke(main, ["storage", "format", *flags, "--cluster-id", CLUSTER])
    assert r.exit_code == 0, r.output
    out = subprocess.run(
        [sys.executable, "-c", CHILD, "node", *flags, "--log-dir", str(tmp_path / "logs")],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    return set(out.stdout.rsplit("@@modules", 1)[1].split())


def loaded(modules: set[str], packages: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == p or m.startswith(p + ".") for p in packages))


@pytest.mark.parametrize("props", [CONTROLLER, COMBINED], ids=["controller", "combined"])
def test_a_node_start_imports_neither_the_checker_nor_spark(
        tmp_path: Path, props: dict[str, str]) -> None:
    modules = node_start_modules(tmp_path, props)
    assert "adapters.kraft_node.runtime" in modules and "adapters.cli.node_cmd" in modules
    assert loaded(modules, NEVER) == []
    other_commands = [m for m in loaded(modules, ("adapters.cli",))
                      if m.endswith("_cmd") and m not in ("adapters.cli.node_cmd",
                                                          "adapters.cli.storage_cmd")]
    assert other_commands == []


def test_a_controller_start_imports_no_zookeeper_mode_broker(tmp_path: Path) -> None:
    modules = node_start_modules(tmp_path, CONTROLLER)
    assert "adapters.raft_node.node" in modules and "adapters.network.codec" in modules
    assert loaded(modules, ("fsm.broker", "adapters.network.broker_handler",
                            "adapters.network.server")) == []
