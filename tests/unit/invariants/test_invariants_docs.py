"""``specs/invariants.md`` is generated from the docstrings; ``invariants/`` stays pure."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import invariants as I

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "invariants"


def test_specs_invariants_md_is_up_to_date() -> None:
    committed = (ROOT / "specs" / "invariants.md").read_text()
    assert committed == I.catalogue_markdown(), (
        "specs/invariants.md is stale; regenerate it with "
        "`python -m invariants > specs/invariants.md`")


def test_markdown_lists_every_invariant_with_its_docstring() -> None:
    text = I.catalogue_markdown()
    for inv in I.CATALOGUE:
        assert f"## {inv.name}" in text and inv.doc in text and inv.source in text


def test_invariants_import_only_fsm_and_stdlib() -> None:
    stdlib = set(sys.stdlib_module_names)
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                mods = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                mods = [node.module or ""] if node.level == 0 else []
            else:
                continue
            for m in mods:
                top = m.split(".")[0]
                assert top in stdlib or top in ("fsm", "invariants", "__future__"), \
                    f"{path.relative_to(ROOT)} imports {m}"


def test_no_io_clock_or_randomness() -> None:
    banned = {"os", "io", "time", "datetime", "random", "socket", "threading", "subprocess",
              "asyncio", "logging", "pathlib", "secrets"}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "__main__.py":  # prints the catalogue: the one place with output
            continue
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            for m in names:
                assert m.split(".")[0] not in banned, f"{path.name} imports {m}"
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                assert node.func.id not in ("open", "print", "input"), \
                    f"{path.name} calls {node.func.id}"
