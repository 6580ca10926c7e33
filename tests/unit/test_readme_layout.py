"""The README's layout table matches the tree: every path it names exists, and every
top-level directory, every package of ``fsm``, ``adapters`` and ``model_check`` (two levels
down at most) and every module directly in ``adapters`` is in it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _table_paths() -> set[str]:
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Layout\n"):]
    section = section[:section.index("\n## ", 1)]
    out: set[str] = set()
    for line in section.splitlines():
        if not line.startswith("| `"):
            continue
        names = re.findall(r"`([^`]+)`", line.split(" | ")[0])
        first = names[0]
        out.add(first.rstrip("/"))
        base = first.rsplit("/", 1)[0]
        out.update(f"{base}/{n}" for n in names[1:])  # siblings named by file name only
    return out


def test_every_path_the_table_names_exists() -> None:
    missing = sorted(p for p in _table_paths() if not (ROOT / p).exists())
    assert not missing, missing


def test_every_directory_and_package_is_in_the_table() -> None:
    named = _table_paths()
    wanted = {p.name for p in ROOT.iterdir()
              if p.is_dir() and not p.name.startswith((".", "_")) and p.name != "build"
              and not p.name.endswith(".egg-info")}
    for top in ("fsm", "adapters", "model_check"):  # packages two levels down at most
        wanted |= {str(p.parent.relative_to(ROOT)) for p in (ROOT / top).rglob("__init__.py")
                   if len(p.parent.relative_to(ROOT).parts) <= 3}
    wanted |= {str(p.relative_to(ROOT)) for p in (ROOT / "adapters").glob("*.py")
               if p.name != "__init__.py"}
    missing = sorted(p for p in wanted if p not in named)
    assert not missing, missing
