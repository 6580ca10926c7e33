"""The layers (what may import what): the checker and the invariants import no adapter, the
command line imports the checker; the network layer and the ensemble launcher import
neither kazoo nor the controller service; the host package is the standard library only."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _imports(package: str) -> list[tuple[str, str]]:
    """(file, imported module) for every absolute import under ``package``, nested ones
    (inside functions) included."""
    out = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                out += [(str(path.relative_to(ROOT)), a.name) for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                out.append((str(path.relative_to(ROOT)), node.module))
    return out


def _offending(package: str, forbidden: tuple[str, ...]) -> list[str]:
    return [f"{f}: {m}" for f, m in _imports(package)
            if any(m == p or m.startswith(p + ".") for p in forbidden)]


def test_the_checker_and_the_invariants_import_no_adapter() -> None:
    assert _offending("model_check", ("adapters",)) == []
    assert _offending("invariants", ("adapters", "model_check")) == []


def test_the_network_layer_imports_neither_kazoo_nor_the_zookeeper_side() -> None:
    assert _offending("adapters/network", ("kazoo", "adapters.zookeeper", "adapters.controller",
                                           "adapters.broker", "adapters.cli",
                                           "adapters.ensemble")) == []


def test_the_ensemble_launcher_and_the_host_package_stand_alone() -> None:
    assert _offending("adapters/ensemble", ("kazoo", "fsm", "adapters.zookeeper",
                                            "adapters.controller", "adapters.network")) == []
    assert [m for _, m in _imports("adapters/host") if m.split(".")[0] not in
            sys.stdlib_module_names | {"__future__"}] == []


def test_the_zookeeper_binding_does_not_reach_up() -> None:
    assert _offending("adapters/zookeeper", ("adapters.controller", "adapters.network",
                                             "adapters.broker", "adapters.cli",
                                             "adapters.ensemble", "model_check")) == []
    assert _offending("adapters/zookeeper/codec", ("kazoo",)) == []


def _loaded_after(code: str) -> set[str]:
    """The modules loaded by ``code``, run in a fresh interpreter from the project root."""
    probe = (f"{code}\nimport sys\n"
             "print('@@modules', ' '.join(sorted(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True,
                         text=True, check=True, timeout=60)
    return set(out.stdout.rsplit("@@modules", 1)[1].split())


def test_the_listeners_do_not_pull_in_kazoo() -> None:
    loaded = _loaded_after("import adapters.network.listeners, adapters.network")
    assert "adapters.network.listeners" in loaded
    assert not [m for m in loaded if m == "kazoo" or m.startswith("kazoo.")]


def test_the_spark_submit_application_runs_without_the_command_line() -> None:
    """``model_check/spark/submit.py`` as spark-submit runs it (a file, ``__main__``), up to
    the command's help: no adapter is loaded."""
    code = ("import runpy, sys\nsys.argv = ['submit.py', '--help']\n"
            "try:\n    runpy.run_path('model_check/spark/submit.py', run_name='__main__')\n"
            "except SystemExit as e:\n    assert e.code == 0, e.code\n")
    loaded = _loaded_after(code)
    assert "model_check.command" in loaded
    assert not [m for m in loaded if m == "adapters" or m.startswith("adapters.")]
