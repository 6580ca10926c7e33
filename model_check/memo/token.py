"""The code token: which version of the cores' code a memo answers for.

A memo records what the code did; a patched core (a mutant, a test's monkeypatch) must not be
answered from a memo the clean code filled, nor the reverse. The token is the identity of
every attribute of every loaded ``fsm`` module (and of the world's ZooKeeper and readers)
and of the classes they define -- what a monkeypatch of the core changes. The objects are
kept alive with the token, so an id in it is never reused while its memo lives.
"""

from __future__ import annotations

import sys

WORLD_MODULES = frozenset({"model_check.world.zookeeper", "model_check.world.reads"})
"""World modules whose code the memo answers for besides ``fsm`` (the ZooKeeper calls)."""


def code_token() -> tuple[tuple, list]:
    """``(token, keepalive)`` of the code loaded now."""
    ids: list[int] = []
    alive: list[object] = []
    for name in sorted(m for m in list(sys.modules)
                       if m in WORLD_MODULES or m == "fsm" or m.startswith("fsm.")):
        mod = sys.modules.get(name)
        if mod is None:
            continue
        for value in list(vars(mod).values()):
            ids.append(id(value))
            alive.append(value)
            if isinstance(value, type) and value.__module__ == name:
                for attr in list(vars(value).values()):
                    ids.append(id(attr))
                    alive.append(attr)
    return tuple(ids), alive
