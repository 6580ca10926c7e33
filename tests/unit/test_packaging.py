"""What ``pip install kcontrol`` gives without extras: brokers, controllers and the tools run
without PySpark, Graphviz or networkx loaded, and the commands that need them say which extra to
install (``pyproject.toml``: ``[spark]``, ``[diagrams]``)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=False)


def test_the_command_line_loads_no_optional_package() -> None:
    out = _run(
        "import sys\n"
        "import adapters.cli, adapters.broker.process, adapters.controller.service\n"
        "import model_check.command, model_check.search\n"
        "print(sorted(m for m in ('pyspark', 'graphviz', 'networkx') if m in sys.modules))\n")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_spark_engine_without_pyspark_names_the_extra() -> None:
    out = _run(
        "import sys\n"
        "sys.modules['pyspark'] = None  # as if it were not installed\n"
        "from model_check.spark.cli import SparkUnavailable, run_spark\n"
        "try:\n"
        "    run_spark(None, None, None, None, None)\n"
        "except SparkUnavailable as e:\n"
        "    print(e)\n")
    assert out.returncode == 0, out.stderr
    assert "pip install 'kcontrol[spark]'" in out.stdout


def test_extras_hold_the_heavy_packages_and_make_installs_them() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = " ".join(project["dependencies"])
    assert "pyspark" not in core and "graphviz" not in core
    extras = project["optional-dependencies"]
    assert any(d.startswith("pyspark") for d in extras["spark"])
    assert any(d.startswith("graphviz") for d in extras["diagrams"])
    assert any(d.startswith("ruff") and "<" in d for d in extras["test"]), "ruff needs an upper bound"
    assert any(d.startswith("kazoo") and "<" in d for d in project["dependencies"])
    assert "'.[spark,diagrams,test]'" in (ROOT / "Makefile").read_text()
